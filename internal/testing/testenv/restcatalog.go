package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/pswap/pswap/internal/testing/srcdir"
)

// EnvRESTCatalog is the base URI (http://127.0.0.1:PORT) of the Iceberg
// REST catalog server scripts/test.sh starts (scripts/restcatalog.sh),
// which exports its token and client credentials too.
const EnvRESTCatalog = "PSWAP_REST_CATALOG"

// RESTServer is a running Iceberg REST catalog server (scripts/restcatalog.sh):
// JdbcCatalog on SQLite, S3FileIO on the MinIO of the environment.
type RESTServer struct {
	URI        string // http://127.0.0.1:PORT
	Token      string // the bearer token it requires
	Credential string // client_id:client_secret its token endpoint takes
	Warehouse  string
	envFile    string // set when this process started it
}

var (
	restOnce   sync.Once
	restShared *RESTServer
	restErr    error
)

// RESTCatalog returns the REST catalog server of $PSWAP_REST_CATALOG, or
// one this process starts (StopRESTCatalog stops it; call it from
// TestMain). The server reads and writes tables on S3: without S3 tests
// the test is skipped; a server that cannot start fails it.
func RESTCatalog(t testing.TB) *RESTServer {
	t.Helper()
	S3Options(t) // skips without MinIO
	if testing.Short() {
		t.Skip("REST catalog: not in -short")
	}
	restOnce.Do(func() {
		if u := os.Getenv(EnvRESTCatalog); u != "" {
			restShared = &RESTServer{URI: u, Token: os.Getenv(EnvRESTCatalog + "_TOKEN"),
				Credential: os.Getenv(EnvRESTCatalog + "_CREDENTIAL"), Warehouse: os.Getenv(EnvRESTCatalog + "_WAREHOUSE")}
			return
		}
		restShared, restErr = startREST()
	})
	if restErr != nil {
		t.Fatalf("the REST catalog server cannot start: %v", restErr)
	}
	return restShared
}

// NewRESTCatalog starts a server of the test's own, stopped when the test
// ends: for tests that take it down (Down) and bring it back (Up).
func NewRESTCatalog(t testing.TB) *RESTServer {
	t.Helper()
	S3Options(t)
	if testing.Short() {
		t.Skip("REST catalog: not in -short")
	}
	s, err := startREST()
	if err != nil {
		t.Fatalf("the REST catalog server cannot start: %v", err)
	}
	t.Cleanup(func() { s.stop() })
	return s
}

// Down stops the server's process, keeping its catalog.
func (s *RESTServer) Down(t testing.TB) {
	t.Helper()
	if err := restScript("down", s.envFile).Run(); err != nil {
		t.Fatalf("restcatalog.sh down: %v", err)
	}
}

// Up starts it again on the same port, with the same catalog.
func (s *RESTServer) Up(t testing.TB) {
	t.Helper()
	cmd := restScript("up", s.envFile)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("restcatalog.sh up: %v", err)
	}
}

// StopRESTCatalog stops the server RESTCatalog started, if it started one.
func StopRESTCatalog() {
	if restShared != nil && restShared.envFile != "" {
		restShared.stop()
	}
}

func (s *RESTServer) stop() {
	if s.envFile != "" {
		restScript("stop", s.envFile).Run()
		s.envFile = ""
	}
}

func restScript(args ...string) *exec.Cmd {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(srcdir.Of(file), "..", "..", "..", "scripts", "restcatalog.sh")
	return exec.Command("bash", append([]string{script}, args...)...)
}

func startREST() (*RESTServer, error) {
	cmd := restScript("start")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("scripts/restcatalog.sh start: %w", err)
	}
	s := &RESTServer{envFile: strings.TrimSpace(string(out))}
	f, err := os.Open(s.envFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case EnvRESTCatalog:
			s.URI = v
		case EnvRESTCatalog + "_TOKEN":
			s.Token = v
		case EnvRESTCatalog + "_CREDENTIAL":
			s.Credential = v
		case EnvRESTCatalog + "_WAREHOUSE":
			s.Warehouse = v
		}
	}
	if s.URI == "" {
		s.stop()
		return nil, fmt.Errorf("%s names no server", s.envFile)
	}
	return s, nil
}

// CatalogURL is pswap's --catalog URL of table ns.table on the server.
func (s *RESTServer) CatalogURL(ns, table, extra string) string {
	return "rest+" + s.URI + "/?namespace=" + ns + "&table=" + table + extra
}

// RESTTable is a table as the REST catalog's LoadTable reply has it.
type RESTTable struct {
	MetadataLocation string `json:"metadata-location"`
	Metadata         struct {
		UUID              string            `json:"table-uuid"`
		Location          string            `json:"location"`
		Properties        map[string]string `json:"properties"`
		CurrentSnapshotID *int64            `json:"current-snapshot-id"`
		Snapshots         []struct {
			ID     int64  `json:"snapshot-id"`
			Parent *int64 `json:"parent-snapshot-id"`
		} `json:"snapshots"`
		SnapshotLog []struct {
			ID int64 `json:"snapshot-id"`
		} `json:"snapshot-log"`
	} `json:"metadata"`
}

// Table reads ns.name from the server with plain HTTP, independently of
// pswap's client (nil: no such table).
func (s *RESTServer) Table(t testing.TB, ns, name string) *RESTTable {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URI+"/v1/namespaces/"+url.PathEscape(ns)+"/tables/"+url.PathEscape(name), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("load %s.%s: %d %s", ns, name, resp.StatusCode, body)
	}
	var rt RESTTable
	if err := json.Unmarshal(body, &rt); err != nil {
		t.Fatal(err)
	}
	return &rt
}

// CheckLinear checks that every entry of the table's snapshot log descends
// from the one before: its history only moved forward (a commit that took
// several pswap versions at once logs only the last snapshot).
func (rt *RESTTable) CheckLinear(t testing.TB) {
	t.Helper()
	parents := map[int64]*int64{}
	for _, s := range rt.Metadata.Snapshots {
		parents[s.ID] = s.Parent
	}
	log := rt.Metadata.SnapshotLog
	for i := 1; i < len(log); i++ {
		id := log[i].ID
		for id != log[i-1].ID {
			p := parents[id]
			if p == nil {
				t.Fatalf("the catalog's history is not linear at entry %d: %+v", i, log)
			}
			id = *p
		}
	}
}
