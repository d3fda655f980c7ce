package catalog

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The query parameters every catalog URL takes.
const (
	ParamCatalog         = "catalog"
	ParamNamespace       = "namespace"
	ParamTable           = "table"
	ParamCreateNamespace = "create-namespace"
)

// Names are what a catalog URL's query names: the catalog (a SQL
// catalog's catalog_name), the namespace (dotted when nested) and the
// table, and whether the first publish may create a missing namespace.
type Names struct {
	Catalog, Namespace, Table string
	CreateNamespace           bool
}

// ParseNames reads the names of a catalog URL's query, for a driver's
// parser: namespace and table (required), catalog (required when
// needCatalog), create-namespace (true or false). Any other parameter
// must be one of extra. A parameter given twice, or with a control
// character, is ErrBadURL, as are a missing name and an unknown parameter.
func ParseNames(q url.Values, needCatalog bool, extra ...string) (Names, error) {
	var n Names
	for k := range q {
		switch k {
		case ParamCatalog, ParamNamespace, ParamTable, ParamCreateNamespace:
			continue
		}
		if !slices.Contains(extra, k) {
			return n, fmt.Errorf("%w: unknown parameter %q", ErrBadURL, k)
		}
	}
	get := func(name string, required bool) (string, error) {
		v, err := Param(q, name)
		if err == nil && v == "" && required {
			err = fmt.Errorf("%w: no %s (add %s=... to the query)", ErrBadURL, name, name)
		}
		return v, err
	}
	var err error
	if n.Catalog, err = get(ParamCatalog, needCatalog); err != nil {
		return n, err
	}
	if n.Namespace, err = get(ParamNamespace, true); err != nil {
		return n, err
	}
	if slices.Contains(strings.Split(n.Namespace, "."), "") {
		return n, fmt.Errorf("%w: namespace %q has an empty level", ErrBadURL, n.Namespace)
	}
	if n.Table, err = get(ParamTable, true); err != nil {
		return n, err
	}
	create, err := get(ParamCreateNamespace, false)
	if err != nil {
		return n, err
	}
	if create != "" {
		if n.CreateNamespace, err = strconv.ParseBool(create); err != nil {
			return n, fmt.Errorf("%w: %s=%q is not true or false", ErrBadURL, ParamCreateNamespace, create)
		}
	}
	return n, nil
}

// Param is the value of the query parameter name ("" if absent). Given
// more than once, or with a control character, it is ErrBadURL.
func Param(q url.Values, name string) (string, error) {
	if len(q[name]) > 1 {
		return "", fmt.Errorf("%w: %s given %d times", ErrBadURL, name, len(q[name]))
	}
	v := q.Get(name)
	if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", fmt.Errorf("%w: %s has a control character", ErrBadURL, name)
	}
	return v, nil
}

// Query is the canonical query of a catalog URL: the names (catalog only
// when not empty, create-namespace only when true) and the driver's
// parameters in params, each once, sorted by name: what a driver's Public
// returns. Parameters that carry a secret are the driver's to leave out.
func (n Names) Query(params url.Values) string {
	q := url.Values{}
	for k, v := range params {
		if len(v) > 0 {
			q.Set(k, v[0])
		}
	}
	if n.Catalog != "" {
		q.Set(ParamCatalog, n.Catalog)
	}
	q.Set(ParamNamespace, n.Namespace)
	q.Set(ParamTable, n.Table)
	if n.CreateNamespace {
		q.Set(ParamCreateNamespace, "true")
	}
	return q.Encode()
}
