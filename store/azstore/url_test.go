package azstore

import (
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Location
		err  string
	}{
		{in: "az://lake/sales", want: Location{Container: "lake", Prefix: "sales"}},
		{in: "AZ://lake/sales/dt=1/", want: Location{Container: "lake", Prefix: "sales/dt=1"}},
		{in: "az://lake", want: Location{Container: "lake"}},
		{in: "abfss://lake@acct01.dfs.core.windows.net/sales",
			want: Location{Container: "lake", Prefix: "sales", Account: "acct01", Endpoint: "https://acct01.blob.core.windows.net"}},
		{in: "wasbs://lake@acct01.blob.core.chinacloudapi.cn/a/b",
			want: Location{Container: "lake", Prefix: "a/b", Account: "acct01", Endpoint: "https://acct01.blob.core.chinacloudapi.cn"}},
		{in: "abfs://lake@acct01.dfs.core.windows.net/sales", err: "unencrypted"},
		{in: "wasb://lake@acct01.blob.core.windows.net/sales", err: "az://CONTAINER"},
		{in: "abfss://acct01.dfs.core.windows.net/sales", err: "abfss://container@account.dfs"},
		{in: "abfss://lake@acct01.queue.core.windows.net/x", err: "the host must be"},
		{in: "az://Lake/sales", err: "invalid container"},
		{in: "az://la/sales", err: "invalid container"},
		{in: "az://a--b/sales", err: "hyphens"},
		{in: "az://lake/sales//x", err: "empty path segment"},
		{in: "az://lake/../x", err: "segment"},
		{in: "s3://lake/x", err: "not an az:// URL"},
	} {
		got, err := ParseURL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseURL(%q) = %+v, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"az://lake/sales", "abfss://lake@acct01.dfs.core.windows.net/sales", "wasbs://c@a.blob.x/y/", "az://", "abfs://x@y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		loc, err := ParseURL(raw)
		if err != nil {
			return
		}
		if validateContainer(loc.Container) != nil {
			t.Fatalf("accepted container %q", loc.Container)
		}
		if strings.HasPrefix(loc.Prefix, "/") || strings.HasSuffix(loc.Prefix, "/") {
			t.Fatalf("prefix %q has a leading or trailing slash", loc.Prefix)
		}
		if loc.Account != "" && !strings.HasPrefix(loc.Endpoint, "https://"+loc.Account+".blob.") {
			t.Fatalf("endpoint %q for account %q", loc.Endpoint, loc.Account)
		}
	})
}

func TestFixPrefix(t *testing.T) {
	for _, c := range [][3]string{
		{"t/dt=1/", "/_pswap/", "t/dt=1/_pswap/"},        // Azurite's cut
		{"t/dt=1/_pswap/", "/_pswap/", "t/dt=1/_pswap/"}, // Azure's
		{"many/k", "k01", "many/k01"},
		{"a/", "/", "a/"},
	} {
		if got := fixPrefix(c[0], c[1]); got != c[2] {
			t.Errorf("fixPrefix(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		code   string
		status int
		o      op
		want   error
	}{
		{"ConditionNotMet", 412, opPut, errPrecondition},
		{"BlobAlreadyExists", 409, opPut, errPrecondition},
		{"BlobNotFound", 404, opGet, errNotFound},
		{"ContainerNotFound", 404, opGet, errBucket},
		{"", 404, opContainer, errBucket},
		{"ServerBusy", 503, opPut, errTransient},
		{"", 503, opPut, errTransient},
		{"AuthenticationFailed", 403, opGet, errDenied},
		{"InvalidBlockList", 400, opCommitList, nil},
	} {
		if got := classify(c.o, c.code, c.status, nil); got != c.want {
			t.Errorf("classify(%s, %q, %d) = %v, want %v", c.o.name, c.code, c.status, got, c.want)
		}
	}
}
