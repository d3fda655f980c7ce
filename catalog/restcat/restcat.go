package restcat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/pswap/pswap/catalog"
	"github.com/pswap/pswap/internal/errkind"
)

// PropMetadataLocation is the table property that names the pswap version
// (its vN.metadata.json) the catalog's table reflects, set by each commit.
const PropMetadataLocation = "pswap.metadata-location"

// Errors of a REST catalog, checked with errors.Is.
var (
	// ErrUnauthorized: the catalog refused the credentials (401, 403, or
	// an OAuth2 token request that failed).
	ErrUnauthorized = errkind.New("the REST catalog refused the credentials", errkind.ErrAccessDenied)
	// ErrProtocol: the catalog answered something that is not the REST
	// catalog protocol (a body that does not parse, a table without uuid).
	ErrProtocol = errkind.New("the REST catalog's reply does not follow the protocol", errkind.ErrPermanent)
)

// maxBody bounds a reply the client reads (a table's metadata with many
// snapshots and schemas stays far below).
const maxBody = 64 << 20

// Config names a table of a REST catalog.
type Config struct {
	// URI is the catalog's base URI (http or https, with its path, without
	// /v1): what Spark calls uri.
	URI string
	// Warehouse is sent with GET /v1/config (optional).
	Warehouse string
	// Namespace's levels; Table the table's name.
	Namespace []string
	Table     string
	// CreateNamespace: the first publish creates a missing namespace
	// (default: refuse it with catalog.ErrNoNamespace).
	CreateNamespace bool
	// Token is a bearer token; Credential is "client_id:client_secret" for
	// the OAuth2 client-credentials flow (Token wins when both are given).
	Token      string
	Credential string
	// OAuth2URI is the token endpoint (default URI + /v1/oauth/tokens);
	// Scope its scope (default "catalog").
	OAuth2URI string
	Scope     string
	// Client sends the requests (default: a client with a 30 s timeout).
	Client *http.Client
}

// Catalog is a table of a REST catalog, safe for concurrent use.
type Catalog struct {
	cfg    Config
	client *http.Client

	mu     sync.Mutex
	prefix string // the catalog's {prefix} from /v1/config, "" before it is read
	conf   bool   // /v1/config was read
	token  string // bearer token in use
	last   *table // the table as the last Current read it
}

var (
	_ catalog.Conn            = (*Catalog)(nil)
	_ catalog.DocumentCatalog = (*Catalog)(nil)
)

// Open checks cfg; it does no I/O (the first publish reaches the catalog).
func Open(cfg Config) (*Catalog, error) {
	u, err := url.Parse(cfg.URI)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("rest catalog: the URI must be http(s)://host[:port][/path]")
	}
	if len(cfg.Namespace) == 0 || cfg.Table == "" {
		return nil, fmt.Errorf("rest catalog %s: the namespace and table names must both be given", u.Redacted())
	}
	if cfg.Credential != "" && !strings.Contains(cfg.Credential, ":") {
		return nil, fmt.Errorf("rest catalog %s: the credential must be client_id:client_secret", u.Redacted())
	}
	cfg.URI = strings.TrimSuffix(cfg.URI, "/")
	if cfg.Scope == "" {
		cfg.Scope = "catalog"
	}
	c := &Catalog{cfg: cfg, client: cfg.Client, token: cfg.Token}
	if c.client == nil {
		c.client = &http.Client{Timeout: 30 * time.Second}
	}
	return c, nil
}

// Close releases nothing: the client's idle connections close by themselves.
func (c *Catalog) Close() error {
	c.client.CloseIdleConnections()
	return nil
}

// String names the catalog and the table, never a secret.
func (c *Catalog) String() string {
	u, err := url.Parse(c.cfg.URI)
	shown := "?"
	if err == nil {
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		shown = u.String()
	}
	return fmt.Sprintf("rest catalog %s, table %s.%s", shown, strings.Join(c.cfg.Namespace, "."), c.cfg.Table)
}

// apiError is a reply other than 2xx: its status and the catalog's words.
type apiError struct {
	status int
	typ    string
	msg    string
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("HTTP %d", e.status)
	if e.status == 401 || e.status == 403 {
		s = ErrUnauthorized.Error() + ": " + s
	}
	if e.typ != "" {
		s += " " + e.typ
	}
	if e.msg != "" {
		s += ": " + e.msg
	}
	return s
}

func (e *apiError) Unwrap() error {
	switch {
	case e.status == 401 || e.status == 403:
		return ErrUnauthorized
	case e.status == 409:
		return catalog.ErrCatalogConflict
	case e.status >= 500:
		return errkind.ErrOutcomeUnknown
	}
	return nil
}

// errorReply decodes the REST catalog's error body ({"error": {...}}), or
// an OAuth2 one ({"error": "...", "error_description": "..."}).
func errorReply(status int, body []byte) *apiError {
	e := &apiError{status: status}
	var rest struct {
		Error json.RawMessage `json:"error"`
		Desc  string          `json:"error_description"`
	}
	if json.Unmarshal(body, &rest) != nil {
		return e
	}
	var model struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	if json.Unmarshal(rest.Error, &model) == nil {
		e.typ, e.msg = model.Type, model.Message
	} else {
		var s string
		if json.Unmarshal(rest.Error, &s) == nil {
			e.typ, e.msg = s, rest.Desc
		}
	}
	e.msg = clip(e.msg)
	return e
}

// clip keeps an error message of the catalog short and on one line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// do sends a request and decodes a 2xx reply's JSON into out (when not
// nil). Any other reply is an *apiError.
func (c *Catalog) do(ctx context.Context, method, path string, in, out any) error {
	if err := c.setup(ctx); err != nil {
		return err
	}
	return c.send(ctx, method, c.cfg.URI+path, in, out, true)
}

func (c *Catalog) send(ctx context.Context, method, u string, in, out any, auth bool) error {
	var body io.Reader
	ctype := ""
	switch v := in.(type) {
	case nil:
	case url.Values:
		body, ctype = strings.NewReader(v.Encode()), "application/x-www-form-urlencoded"
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		body, ctype = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Client-Version", "pswap")
	if auth {
		c.mu.Lock()
		tok := c.token
		c.mu.Unlock()
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, redactPath(u), stripURL(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("%s %s: read the reply: %w", method, redactPath(u), err)
	}
	if len(data) > maxBody {
		return fmt.Errorf("%s %s: %w: a reply of more than %d bytes", method, redactPath(u), ErrProtocol, maxBody)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := errorReply(resp.StatusCode, data)
		e.msg = c.scrub(e.msg)
		return fmt.Errorf("%s %s: %w", method, redactPath(u), e)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: %w: %v", method, redactPath(u), ErrProtocol, err)
		}
	}
	return nil
}

// scrub replaces the secrets the client holds in a server's words (a
// server may quote the request it refuses).
func (c *Catalog) scrub(s string) string {
	c.mu.Lock()
	secrets := []string{c.token, c.cfg.Token, c.cfg.Credential}
	c.mu.Unlock()
	if _, secret, ok := strings.Cut(c.cfg.Credential, ":"); ok {
		secrets = append(secrets, secret)
	}
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[REDACTED]")
		}
	}
	return s
}

// redactPath drops a URL's userinfo and query from an error's text.
func redactPath(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(url)"
	}
	p.User, p.RawQuery = nil, ""
	return p.String()
}

// stripURL keeps the cause of a *url.Error: the request's URL is named by
// the caller, without its query.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// setup fetches a token (OAuth2 client credentials) and the catalog's
// configuration (its prefix), once.
func (c *Catalog) setup(ctx context.Context) error {
	c.mu.Lock()
	needToken := c.token == "" && c.cfg.Credential != ""
	conf := c.conf
	c.mu.Unlock()
	if needToken {
		if err := c.fetchToken(ctx); err != nil {
			return err
		}
	}
	if conf {
		return nil
	}
	q := url.Values{}
	if c.cfg.Warehouse != "" {
		q.Set("warehouse", c.cfg.Warehouse)
	}
	u := c.cfg.URI + "/v1/config"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var reply struct {
		Defaults  map[string]string `json:"defaults"`
		Overrides map[string]string `json:"overrides"`
	}
	if err := c.send(ctx, http.MethodGet, u, nil, &reply, true); err != nil {
		return fmt.Errorf("read the catalog's configuration: %w", err)
	}
	prefix := reply.Defaults["prefix"]
	if p, ok := reply.Overrides["prefix"]; ok {
		prefix = p
	}
	c.mu.Lock()
	c.prefix, c.conf = strings.Trim(prefix, "/"), true
	c.mu.Unlock()
	return nil
}

// fetchToken exchanges the client credentials for a bearer token.
func (c *Catalog) fetchToken(ctx context.Context) error {
	id, secret, _ := strings.Cut(c.cfg.Credential, ":")
	form := url.Values{
		"grant_type":    {"client_credentials"},
		"client_id":     {id},
		"client_secret": {secret},
		"scope":         {c.cfg.Scope},
	}
	u := c.cfg.OAuth2URI
	if u == "" {
		u = c.cfg.URI + "/v1/oauth/tokens"
	}
	var reply struct {
		AccessToken string `json:"access_token"`
	}
	if err := c.send(ctx, http.MethodPost, u, form, &reply, false); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.status >= 400 && ae.status < 500 {
			return fmt.Errorf("%w: OAuth2 client credentials: %w", ErrUnauthorized, err)
		}
		return fmt.Errorf("OAuth2 client credentials: %w", err)
	}
	if reply.AccessToken == "" {
		return fmt.Errorf("OAuth2 client credentials: %w: no access_token in the reply", ErrProtocol)
	}
	c.mu.Lock()
	c.token = reply.AccessToken
	c.mu.Unlock()
	return nil
}

// namespacesPath is /v1/{prefix}/namespaces.
func (c *Catalog) namespacesPath() string {
	c.mu.Lock()
	prefix := c.prefix
	c.mu.Unlock()
	p := "/v1/"
	if prefix != "" {
		p += escapeSegments(prefix) + "/"
	}
	return p + "namespaces"
}

// nsPath is /v1/{prefix}/namespaces/{ns}.
func (c *Catalog) nsPath() string {
	return c.namespacesPath() + "/" + url.PathEscape(strings.Join(c.cfg.Namespace, "\x1f"))
}

func escapeSegments(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

func (c *Catalog) tablePath() string {
	return c.nsPath() + "/tables/" + url.PathEscape(c.cfg.Table)
}

// notFound reports a 404 and whether the catalog named the namespace as
// what is missing.
func notFound(err error) (missing, namespace bool) {
	var ae *apiError
	if !errors.As(err, &ae) || ae.status != 404 {
		return false, false
	}
	return true, strings.Contains(strings.ToLower(ae.typ), "namespace")
}

// load reads the table (GET .../tables/{t}).
func (c *Catalog) load(ctx context.Context) (*table, error) {
	var reply struct {
		MetadataLocation string          `json:"metadata-location"`
		Metadata         json.RawMessage `json:"metadata"`
	}
	if err := c.do(ctx, http.MethodGet, c.tablePath(), nil, &reply); err != nil {
		if missing, _ := notFound(err); missing {
			return nil, catalog.ErrNotRegistered
		}
		return nil, fmt.Errorf("load the table: %w", err)
	}
	t, err := parseTable(reply.Metadata)
	if err != nil {
		return nil, fmt.Errorf("load the table: %w: %w", ErrProtocol, err)
	}
	t.metadataLocation = reply.MetadataLocation
	return t, nil
}

// Current is the pswap version the catalog's table reflects: its
// pswap.metadata-location property, or the metadata file it was
// registered with. A table that another tool created (or moved past
// pswap's versions) answers its own metadata location, which is no
// version of the pswap table: the publish refuses it (ErrCatalogForeign).
func (c *Catalog) Current(ctx context.Context) (string, error) {
	t, err := c.load(ctx)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.last = t
	c.mu.Unlock()
	return t.pswapLocation(), nil
}

// Register registers the table with pswap's metadata file loc, creating
// the namespace first when asked to.
func (c *Catalog) Register(ctx context.Context, loc string) error {
	body := map[string]any{"name": c.cfg.Table, "metadata-location": loc}
	// Some catalogs (a JDBC-backed one) register a table in a namespace
	// that does not exist: ask first.
	err := c.do(ctx, http.MethodHead, c.nsPath(), nil, nil)
	if missing, _ := notFound(err); missing {
		err = &apiError{status: 404, typ: "NoSuchNamespaceException"}
	} else if err == nil {
		err = c.do(ctx, http.MethodPost, c.nsPath()+"/register", body, nil)
	}
	if missing, ns := notFound(err); missing && ns {
		if !c.cfg.CreateNamespace {
			return fmt.Errorf("%w: %q (create it, or add create-namespace=true to the catalog URL): %w",
				catalog.ErrNoNamespace, strings.Join(c.cfg.Namespace, "."), err)
		}
		if err := c.createNamespace(ctx); err != nil {
			return err
		}
		err = c.do(ctx, http.MethodPost, c.nsPath()+"/register", body, nil)
	}
	if err != nil {
		return fmt.Errorf("register the table: %w", err)
	}
	return nil
}

func (c *Catalog) createNamespace(ctx context.Context) error {
	err := c.do(ctx, http.MethodPost, c.namespacesPath(), map[string]any{"namespace": c.cfg.Namespace}, nil)
	if err != nil && !errors.Is(err, catalog.ErrCatalogConflict) { // 409: it exists by now
		return fmt.Errorf("create the namespace %q: %w", strings.Join(c.cfg.Namespace, "."), err)
	}
	return nil
}

// Swap cannot move a REST catalog's table without the new version's
// document: a publish calls SwapDocument.
func (c *Catalog) Swap(ctx context.Context, prev, loc string) error {
	return fmt.Errorf("rest catalog: Swap needs the metadata document (SwapDocument)")
}

// SwapDocument commits pswap's version loc (its metadata document doc) as
// the difference from the catalog's table, if the table still reflects
// prev: requirements assert-table-uuid and assert-ref-snapshot-id(main).
func (c *Catalog) SwapDocument(ctx context.Context, prev, loc string, doc []byte) error {
	c.mu.Lock()
	cur := c.last
	c.mu.Unlock()
	if cur == nil || cur.pswapLocation() != prev {
		var err error
		if cur, err = c.load(ctx); err != nil {
			return err
		}
		if cur.pswapLocation() != prev {
			return fmt.Errorf("%w: it reflects %s, not %s", catalog.ErrCatalogConflict, cur.pswapLocation(), prev)
		}
	}
	next, err := parseTable(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", loc, err)
	}
	req, err := commitRequest(cur, next, loc)
	if err != nil {
		return err
	}
	err = c.do(ctx, http.MethodPost, c.tablePath(), req, nil)
	c.mu.Lock()
	c.last = nil
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("commit the table: %w", err)
	}
	return nil
}
