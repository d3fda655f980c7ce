package azstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/pswap/pswap/store"
)

// Location is what a table URL on Azure Blob Storage names.
type Location struct {
	// Container and Prefix (without leading or trailing slashes).
	Container, Prefix string
	// Account is the storage account the URL names (abfss://, wasbs://),
	// or "" for az://, whose account comes from the environment.
	Account string
	// Endpoint is the blob service URL the URL implies
	// (https://ACCOUNT.blob.SUFFIX), or "".
	Endpoint string
}

// ParseURL parses the URL forms of a location on Azure Blob Storage:
//
//	az://container/prefix                                    (pswap's own; the account from the environment)
//	abfss://container@account.dfs.core.windows.net/prefix    (Spark's and Iceberg's ADLS Gen2 form)
//	wasbs://container@account.blob.core.windows.net/prefix   (Hadoop's WASB form)
//
// The unencrypted forms (abfs://, wasb://) are refused, naming az://. The
// path is taken literally, as s3store.ParseURL takes it.
func ParseURL(raw string) (Location, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return Location{}, fmt.Errorf("azstore: %q is not an az:// URL", raw)
	}
	var loc Location
	authority, prefix, _ := strings.Cut(rest, "/")
	switch strings.ToLower(scheme) {
	case "az":
		loc.Container = authority
	case "abfss", "wasbs":
		c, host, ok := strings.Cut(authority, "@")
		if !ok || c == "" || host == "" {
			return Location{}, fmt.Errorf("azstore: URL %q: want %s://container@account.%s.core.windows.net/prefix, or az://container/prefix",
				raw, strings.ToLower(scheme), map[bool]string{true: "dfs", false: "blob"}[strings.EqualFold(scheme, "abfss")])
		}
		account, suffix, ok := strings.Cut(strings.ToLower(host), ".")
		service, domain, _ := strings.Cut(suffix, ".")
		if !ok || (service != "dfs" && service != "blob") || domain == "" {
			return Location{}, fmt.Errorf("azstore: URL %q: the host must be ACCOUNT.dfs.core.windows.net or ACCOUNT.blob.core.windows.net", raw)
		}
		if err := validateAccount(account); err != nil {
			return Location{}, fmt.Errorf("azstore: URL %q: %w", raw, err)
		}
		loc.Container, loc.Account = c, account
		loc.Endpoint = "https://" + account + ".blob." + domain
	case "abfs", "wasb":
		return Location{}, fmt.Errorf("azstore: URL %q: unencrypted %s:// is not supported; use %ss:// or az://CONTAINER/prefix with %s",
			raw, strings.ToLower(scheme), strings.ToLower(scheme), EnvAccount)
	default:
		return Location{}, fmt.Errorf("azstore: %q is not an az:// URL", raw)
	}
	if err := validateContainer(loc.Container); err != nil {
		return Location{}, fmt.Errorf("azstore: URL %q: %w", raw, err)
	}
	// One trailing slash is allowed; anything else that leaves an empty
	// segment is refused.
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix != "" {
		if err := store.ValidateKey(prefix); err != nil {
			return Location{}, fmt.Errorf("azstore: URL %q: %w", raw, err)
		}
	}
	loc.Prefix = prefix
	return loc, nil
}

// IsURL reports whether raw has one of the schemes ParseURL reads or
// refuses by name.
func IsURL(raw string) bool {
	scheme, _, ok := strings.Cut(raw, "://")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "az", "abfss", "wasbs", "abfs", "wasb":
		return true
	}
	return false
}

// Open is New for a URL that ParseURL reads. The account and endpoint an
// abfss:// or wasbs:// URL names take the place of opts.Account and
// opts.Endpoint when those are empty.
func Open(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	loc, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if loc.Account != "" {
		if opts.Account != "" && opts.Account != loc.Account {
			return nil, fmt.Errorf("azstore: URL %q names account %q, the options %q", rawURL, loc.Account, opts.Account)
		}
		opts.Account = loc.Account
		if opts.Endpoint == "" {
			opts.Endpoint = loc.Endpoint
		}
	}
	return New(ctx, loc.Container, loc.Prefix, opts)
}
