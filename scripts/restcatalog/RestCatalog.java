// An Iceberg REST catalog server for pswap's tests (scripts/restcatalog.sh).
//
// It serves the REST catalog protocol with Apache Iceberg's own server-side
// handlers (org.apache.iceberg.rest.CatalogHandlers, the code Apache's
// RESTCatalogServer test fixture and Polaris delegate to) over a JdbcCatalog
// on SQLite, with S3FileIO on the S3 endpoint of $AWS_ENDPOINT_URL (MinIO in
// the tests). Only the JDK's HTTP server is added: Apache's fixture jar
// (iceberg-open-api test-fixtures) lacks the adapter classes it needs and is
// not published for 1.12.0.
//
// Environment: RC_PORT (loopback port), RC_DB (SQLite file), RC_WAREHOUSE
// (s3://bucket/prefix), RC_TOKEN (when set, every request but /v1/oauth/tokens
// needs "Authorization: Bearer RC_TOKEN"), RC_CREDENTIAL (client_id:secret
// that /v1/oauth/tokens exchanges for RC_TOKEN), AWS_ENDPOINT_URL,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION.
//
// Requests are served one at a time: SQLite has one writer, and the
// catalog's compare-and-swap is what the tests exercise, not its threads.
import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.PropertyAccessor;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.BadRequestException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.apache.iceberg.rest.RESTSerializers;
import org.apache.iceberg.rest.requests.CreateNamespaceRequest;
import org.apache.iceberg.rest.requests.CreateTableRequest;
import org.apache.iceberg.rest.requests.RegisterTableRequest;
import org.apache.iceberg.rest.requests.UpdateTableRequest;
import org.apache.iceberg.rest.responses.ConfigResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.OAuthTokenResponse;

public class RestCatalog {
  private static final ObjectMapper MAPPER = mapper();

  // mapper is RESTObjectMapper's (package-private) configuration.
  private static ObjectMapper mapper() {
    ObjectMapper m = new ObjectMapper();
    m.setVisibility(PropertyAccessor.FIELD, JsonAutoDetect.Visibility.ANY);
    m.configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    m.setPropertyNamingStrategy(PropertyNamingStrategies.KEBAB_CASE);
    RESTSerializers.registerAll(m);
    return m;
  }

  private static Catalog catalog;
  private static String token;
  private static String credential;

  public static void main(String[] args) throws Exception {
    Map<String, String> env = System.getenv();
    int port = Integer.parseInt(env.get("RC_PORT"));
    token = env.getOrDefault("RC_TOKEN", "");
    credential = env.getOrDefault("RC_CREDENTIAL", "");

    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.CATALOG_IMPL, "org.apache.iceberg.jdbc.JdbcCatalog");
    props.put(CatalogProperties.URI, "jdbc:sqlite:" + env.get("RC_DB"));
    props.put("jdbc.schema-version", "V1");
    props.put(CatalogProperties.WAREHOUSE_LOCATION, env.get("RC_WAREHOUSE"));
    props.put(CatalogProperties.FILE_IO_IMPL, "org.apache.iceberg.aws.s3.S3FileIO");
    props.put("s3.endpoint", env.get("AWS_ENDPOINT_URL"));
    props.put("s3.path-style-access", "true");
    props.put("s3.access-key-id", env.get("AWS_ACCESS_KEY_ID"));
    props.put("s3.secret-access-key", env.get("AWS_SECRET_ACCESS_KEY"));
    props.put("client.region", env.getOrDefault("AWS_REGION", "us-east-1"));
    catalog = CatalogUtil.buildIcebergCatalog("rest_backend", props, null);

    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
    server.setExecutor(Executors.newSingleThreadExecutor());
    server.createContext("/", RestCatalog::handle);
    server.start();
    System.err.println("restcatalog: listening on 127.0.0.1:" + port);
  }

  private static void handle(HttpExchange ex) throws IOException {
    int status;
    Object body;
    try {
      String path = ex.getRequestURI().getRawPath();
      String method = ex.getRequestMethod();
      byte[] in = ex.getRequestBody().readAllBytes();
      if (path.equals("/v1/oauth/tokens")) {
        Object[] r = oauth(new String(in, StandardCharsets.UTF_8));
        status = (Integer) r[0];
        body = r[1];
      } else {
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        if (!token.isEmpty() && !("Bearer " + token).equals(auth)) {
          throw new NotAuthorizedException("Not authorized: a bearer token is required");
        }
        body = route(method, path, in);
        status = body == null ? 204 : 200;
      }
    } catch (Exception e) {
      status = statusOf(e);
      body =
          ErrorResponse.builder()
              .responseCode(status)
              .withType(e.getClass().getSimpleName())
              .withMessage(String.valueOf(e.getMessage()))
              .build();
      if (status >= 500) {
        e.printStackTrace();
      }
    }
    byte[] out = body == null ? new byte[0] : MAPPER.writeValueAsBytes(body);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    if (out.length == 0 || ex.getRequestMethod().equals("HEAD")) {
      ex.sendResponseHeaders(status, -1);
    } else {
      ex.sendResponseHeaders(status, out.length);
      try (OutputStream os = ex.getResponseBody()) {
        os.write(out);
      }
    }
    ex.close();
  }

  private static int statusOf(Exception e) {
    if (e instanceof NoSuchNamespaceException || e instanceof NoSuchTableException) {
      return 404;
    }
    if (e instanceof AlreadyExistsException
        || e instanceof CommitFailedException
        || e instanceof NamespaceNotEmptyException) {
      return 409;
    }
    if (e instanceof NotAuthorizedException) {
      return 401;
    }
    if (e instanceof ForbiddenException) {
      return 403;
    }
    if (e instanceof CommitStateUnknownException) {
      return 500;
    }
    if (e instanceof ValidationException
        || e instanceof BadRequestException
        || e instanceof IllegalArgumentException
        || e instanceof IOException) {
      return 400;
    }
    return 500;
  }

  // oauth answers a client-credentials token request.
  private static Object[] oauth(String form) {
    Map<String, String> f = new HashMap<>();
    for (String kv : form.split("&")) {
      int i = kv.indexOf('=');
      if (i > 0) {
        f.put(
            URLDecoder.decode(kv.substring(0, i), StandardCharsets.UTF_8),
            URLDecoder.decode(kv.substring(i + 1), StandardCharsets.UTF_8));
      }
    }
    String given = f.getOrDefault("client_id", "") + ":" + f.getOrDefault("client_secret", "");
    if (!"client_credentials".equals(f.get("grant_type"))
        || credential.isEmpty()
        || !credential.equals(given)) {
      Map<String, String> err = new HashMap<>();
      err.put("error", "invalid_client");
      err.put("error_description", "Credentials given were invalid");
      return new Object[] {401, err};
    }
    return new Object[] {
      200,
      OAuthTokenResponse.builder()
          .withToken(token)
          .withTokenType("bearer")
          .withIssuedTokenType("urn:ietf:params:oauth:token-type:access_token")
          .build()
    };
  }

  private static Object route(String method, String rawPath, byte[] in) throws IOException {
    String[] p = Arrays.stream(rawPath.split("/")).filter(s -> !s.isEmpty()).toArray(String[]::new);
    if (p.length < 2 || !p[0].equals("v1")) {
      throw new BadRequestException("no such route: %s %s", method, rawPath);
    }
    if (p.length == 2 && p[1].equals("config")) {
      return ConfigResponse.builder().build();
    }
    if (!p[1].equals("namespaces")) {
      throw new BadRequestException("no such route: %s %s", method, rawPath);
    }
    SupportsNamespaces nss = (SupportsNamespaces) catalog;
    if (p.length == 2) {
      if (method.equals("POST")) {
        return CatalogHandlers.createNamespace(nss, MAPPER.readValue(in, CreateNamespaceRequest.class));
      }
      return CatalogHandlers.listNamespaces(nss, Namespace.empty());
    }
    Namespace ns = Namespace.of(decode(p[2]).split("\u001f"));
    if (p.length == 3) {
      switch (method) {
        case "HEAD":
          CatalogHandlers.namespaceExists(nss, ns);
          return null;
        case "DELETE":
          CatalogHandlers.dropNamespace(nss, ns);
          return null;
        default:
          return CatalogHandlers.loadNamespace(nss, ns);
      }
    }
    if (p.length == 4 && p[3].equals("register") && method.equals("POST")) {
      return CatalogHandlers.registerTable(catalog, ns, MAPPER.readValue(in, RegisterTableRequest.class));
    }
    if (p.length == 4 && p[3].equals("tables")) {
      if (method.equals("POST")) {
        return CatalogHandlers.createTable(catalog, ns, MAPPER.readValue(in, CreateTableRequest.class));
      }
      return CatalogHandlers.listTables(catalog, ns);
    }
    if (p.length == 5 && p[3].equals("tables")) {
      TableIdentifier id = TableIdentifier.of(ns, decode(p[4]));
      switch (method) {
        case "HEAD":
          CatalogHandlers.tableExists(catalog, id);
          return null;
        case "DELETE":
          CatalogHandlers.dropTable(catalog, id);
          return null;
        case "POST":
          return CatalogHandlers.updateTable(catalog, id, MAPPER.readValue(in, UpdateTableRequest.class));
        default:
          return CatalogHandlers.loadTable(catalog, id, RESTCatalogProperties.SnapshotMode.ALL);
      }
    }
    throw new BadRequestException("no such route: %s %s", method, rawPath);
  }

  private static String decode(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }
}
