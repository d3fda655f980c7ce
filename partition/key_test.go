package partition

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pswap/pswap/store"
)

func TestParseValid(t *testing.T) {
	tests := []struct {
		in    string
		cols  []Column
		canon string // "" means the input is canonical
	}{
		{"dt=2026-11-29", []Column{{"dt", "2026-11-29"}}, ""},
		{"dt=2026-11-29/hr=13", []Column{{"dt", "2026-11-29"}, {"hr", "13"}}, ""},
		{"year=2026/month=11/day=29", []Column{{"year", "2026"}, {"month", "11"}, {"day", "29"}}, ""},
		{"a_1=x", []Column{{"a_1", "x"}}, ""},
		{"ts=2026-11-29T13%3A00%3A00Z", []Column{{"ts", "2026-11-29T13:00:00Z"}}, ""},
		{"ts=2026-11-29T13:00", []Column{{"ts", "2026-11-29T13:00"}}, "ts=2026-11-29T13%3A00"},
		{"p=a%2fb%3d", nil, ""}, // rejected below: '/' after unescaping; placeholder removed in loop
		{"p=%25", []Column{{"p", "%"}}, ""},
		{"p=%7B%5B%5D%5E%7D", []Column{{"p", "{[]^}"}}, "p=%7B%5B%5D%5E}"},
		{"p=a%3db", []Column{{"p", "a=b"}}, "p=a%3Db"},
		{"p=a=b", []Column{{"p", "a=b"}}, "p=a%3Db"},
		{"p=%41", []Column{{"p", "A"}}, "p=A"},
		{"city=Z%C3%BCrich", []Column{{"city", "Zürich"}}, "city=Zürich"},
		{"city=Zürich", []Column{{"city", "Zürich"}}, ""},
		{"p=hello world", []Column{{"p", "hello world"}}, ""},
		{"p=...", []Column{{"p", "..."}}, ""},
		{"p=.hidden", []Column{{"p", ".hidden"}}, ""},
		{"p=_x", []Column{{"p", "_x"}}, ""},
		{"p=x.pswap-tmp2", []Column{{"p", "x.pswap-tmp2"}}, ""},
		{"a=1/b=2/c=3/d=4/e=5/f=6/g=7/h=8", []Column{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}, {"f", "6"}, {"g", "7"}, {"h", "8"}}, ""},
	}
	for _, tt := range tests {
		if tt.cols == nil {
			continue
		}
		t.Run(tt.in, func(t *testing.T) {
			k, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := k.Columns(); !slices.Equal(got, tt.cols) {
				t.Errorf("Columns() = %q, want %q", got, tt.cols)
			}
			want := tt.canon
			if want == "" {
				want = tt.in
			}
			if k.String() != want || k.Path() != want {
				t.Errorf("String() = %q, Path() = %q, want %q", k.String(), k.Path(), want)
			}
			if k.IsZero() {
				t.Error("IsZero() = true")
			}
			if k.Len() != len(tt.cols) {
				t.Errorf("Len() = %d, want %d", k.Len(), len(tt.cols))
			}
			err = Validate(tt.in)
			if canonical := tt.canon == ""; canonical != (err == nil) {
				t.Errorf("Validate(%q) = %v, canonical %v", tt.in, err, canonical)
			}
			if err != nil && !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Validate error %v does not wrap ErrInvalidKey", err)
			}
			if err := Validate(k.String()); err != nil {
				t.Errorf("Validate(String()) = %v", err)
			}
			k2, err := Parse(k.String())
			if err != nil || k2 != k {
				t.Errorf("Parse(String()) = %v, %v; want %v", k2, err, k)
			}
			k3, err := New(tt.cols...)
			if err != nil || k3 != k {
				t.Errorf("New(Columns()) = %v, %v; want %v", k3, err, k)
			}
			if err := store.ValidateKey(k.Path() + "/_pswap/pointer.json"); err != nil {
				t.Errorf("store rejects the key's path: %v", err)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	long := "p=" + strings.Repeat("x", MaxLen-1)
	tests := []struct {
		in      string
		problem string // a substring of the error
	}{
		{"", "empty"},
		{"/dt=1", "leading /"},
		{"dt=1/", "trailing /"},
		{"dt=1//hr=2", "empty segment"},
		{"/", "leading /"},
		{"..", "not name=value"},
		{"dt=1/..", "not name=value"},
		{".", "not name=value"},
		{"dt=1/../x=1", "not name=value"},
		{"dt", "not name=value"},
		{"=1", "empty"},
		{"dt=", "empty"},
		{"dt=1/dt=2", "duplicate column name"},
		{"Dt=1", "lowercase"},
		{"dT=1", "lowercase"},
		{"_pswap=1", `"_pswap" is a prefix of _pswap`},
		{"_ps=1", `"_ps" is a prefix of _pswap`},
		{"dt=1/_=1", `"_" is a prefix of _pswap`},
		{"_x=1", "leading _"},
		{".dt=1", "leading ."},
		{"1dt=1", "lowercase letter"},
		{"d-t=1", "[a-z][a-z0-9_]*"},
		{"d t=1", "[a-z][a-z0-9_]*"},
		{"dé=1", "[a-z][a-z0-9_]*"},
		{"d%74=1", "[a-z][a-z0-9_]*"},
		{"dt=%2E%2E", "not allowed"},
		{"dt=..", "not allowed"},
		{"dt=.", "not allowed"},
		{"dt=a\x00b", "control character"},
		{"dt=a\nb", "control character"},
		{"dt=a\x7fb", "control character"},
		{"dt=a\u0085b", "control character"},
		{"dt=a%0Ab", "control character"},
		{"dt=a%00", "control character"},
		{"dt=a%7F", "control character"},
		{"dt=a%C2%85", "control character"},
		{"dt=%", "invalid escape"},
		{"dt=%4", "invalid escape"},
		{"dt=%zz", "invalid escape"},
		{"dt=%4g", "invalid escape"},
		{"dt=a%", "invalid escape"},
		{"dt=\xff", "UTF-8"},
		{"dt=%FF", "UTF-8"},
		{"dt=%C3", "UTF-8"},
		{"dt=x.pswap-tmp", "reserved"},
		{"dt=x.pswap-lock", "reserved"},
		{"a=1/b=2/c=3/d=4/e=5/f=6/g=7/h=8/i=9", "more than the limit"},
		{long, "longer than the limit"},
		{"p=" + strings.Repeat(":", 200), "canonical form is"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			k, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error", tt.in, k)
			}
			if !errors.Is(err, ErrInvalidKey) {
				t.Errorf("error %v does not wrap ErrInvalidKey", err)
			}
			if !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("error %q does not mention %q", err, tt.problem)
			}
			if len(tt.in) < 100 && !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.in)) {
				t.Errorf("error %q does not quote the input", err)
			}
			if !k.IsZero() {
				t.Errorf("Parse returned a non-zero key %q with an error", k)
			}
			if Validate(tt.in) == nil {
				t.Errorf("Validate(%q) = nil", tt.in)
			}
		})
	}
}

func TestEscapeMatchesHive(t *testing.T) {
	// Every ASCII character: Hive escapes exactly these.
	const hive = "\"#%'*/:=?\\\x7f{[]^"
	for c := 0; c < 128; c++ {
		s := string(rune(c))
		want := c < 0x20 || strings.ContainsRune(hive, rune(c))
		got := Escape(s) != s
		if got != want {
			t.Errorf("Escape(%q) = %q: escaped %v, want %v", s, Escape(s), got, want)
		}
		if got && Escape(s) != "%"+strings.ToUpper(hex2(c)) {
			t.Errorf("Escape(%q) = %q, want uppercase %%XX", s, Escape(s))
		}
		u, err := Unescape(Escape(s))
		if err != nil || u != s {
			t.Errorf("Unescape(Escape(%q)) = %q, %v", s, u, err)
		}
	}
	if got := Escape("Zürich 1/2"); got != "Zürich 1%2F2" {
		t.Errorf("Escape kept non-ASCII wrong: %q", got)
	}
}

func hex2(c int) string {
	const h = "0123456789abcdef"
	return string([]byte{h[c>>4], h[c&0xf]})
}

func TestNew(t *testing.T) {
	k, err := New(Column{"dt", "2026-11-29"}, Column{"src", "a:b#c"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := k.String(), "dt=2026-11-29/src=a%3Ab%23c"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if v, ok := k.Value("src"); !ok || v != "a:b#c" {
		t.Errorf("Value(src) = %q, %v", v, ok)
	}
	if _, ok := k.Value("nope"); ok {
		t.Error("Value(nope) found")
	}
	// Columns returns a copy: changing it does not change the key.
	cols := k.Columns()
	cols[0].Value = "changed"
	if v, _ := k.Value("dt"); v != "2026-11-29" {
		t.Errorf("key changed through Columns(): %q", v)
	}

	bad := [][]Column{
		nil,
		{{"", "1"}},
		{{"dt", ""}},
		{{"DT", "1"}},
		{{"_x", "1"}},
		{{"dt", "1"}, {"dt", "2"}},
		{{"dt", "a\tb"}},
		{{"dt", "\xff"}},
		{{"dt", ".."}},
		{{"a", "1"}, {"b", "1"}, {"c", "1"}, {"d", "1"}, {"e", "1"}, {"f", "1"}, {"g", "1"}, {"h", "1"}, {"i", "1"}},
		{{"p", strings.Repeat("%", 200)}},
	}
	for _, cols := range bad {
		if k, err := New(cols...); err == nil || !errors.Is(err, ErrInvalidKey) {
			t.Errorf("New(%q) = %q, %v; want ErrInvalidKey", cols, k, err)
		}
	}
}

func TestZeroKey(t *testing.T) {
	var k Key
	if !k.IsZero() || k.String() != "" || k.Columns() != nil || k.Len() != 0 {
		t.Errorf("zero key: IsZero %v String %q Columns %v Len %d", k.IsZero(), k, k.Columns(), k.Len())
	}
	if MustParse("dt=1").IsZero() {
		t.Error("parsed key IsZero")
	}
}

func TestMustParsePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParse of an invalid key did not panic")
		}
	}()
	MustParse("/bad")
}

func TestKeyComparableAndJSON(t *testing.T) {
	a, b := MustParse("dt=2026-11-29/hr=13"), MustParse("dt=2026-11-29/hr=%31%33")
	if a != b {
		t.Errorf("%q != %q", a, b)
	}
	m := map[Key]int{a: 1}
	if m[b] != 1 {
		t.Error("keys with the same canonical form are different map keys")
	}

	type doc struct {
		Partition Key `json:"partition"`
	}
	out, err := json.Marshal(doc{a})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), `{"partition":"dt=2026-11-29/hr=13"}`; got != want {
		t.Errorf("json = %s, want %s", got, want)
	}
	var d doc
	if err := json.Unmarshal(out, &d); err != nil || d.Partition != a {
		t.Errorf("Unmarshal = %v, %v", d.Partition, err)
	}
	for _, in := range []string{`{"partition":""}`, `{"partition":"dt=a:b"}`, `{"partition":"../x=1"}`} {
		var d doc
		if err := json.Unmarshal([]byte(in), &d); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Unmarshal(%s) = %v, want ErrInvalidKey", in, err)
		}
	}
}

// Issue 40 item 10: a value with "/" (escaped %2F, as Hive and Spark store
// it) is accepted and round-trips; its key stays one path segment per
// column.
func TestSlashInValue(t *testing.T) {
	for _, in := range []string{"region=eu%2Fwest", "region=eu%2fwest"} {
		k, err := Parse(in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		if k.String() != "region=eu%2Fwest" || k.Len() != 1 {
			t.Fatalf("Parse(%q) = %q (%d columns)", in, k, k.Len())
		}
		if v, _ := k.Value("region"); v != "eu/west" {
			t.Fatalf("value %q", v)
		}
	}
	k, err := New(Column{"region", "eu/west"}, Column{"dt", "2026-11-29"})
	if err != nil || k.String() != "region=eu%2Fwest/dt=2026-11-29" || k.Len() != 2 {
		t.Fatalf("New = %q, %v", k, err)
	}
	if cols := k.Columns(); cols[0].Value != "eu/west" || cols[1].Value != "2026-11-29" {
		t.Fatalf("Columns = %q", cols)
	}
	if err := Validate("region=eu/west"); err == nil {
		t.Fatal("a raw / in a value is a second segment, not a value")
	}
	for _, bad := range []string{"p=%2F..", "p=..%2F"} {
		if _, err := Parse(bad); err != nil {
			t.Errorf("Parse(%q): %v (a value with / and dots is one segment)", bad, err)
		}
	}
}
