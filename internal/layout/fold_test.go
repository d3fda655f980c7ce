package layout

import "testing"

func TestFoldKey(t *testing.T) {
	for _, part := range []string{"dt=2026-10-01", "dt=2026-10-01/hr=13"} {
		k := FoldKey(part, 42)
		p, seq, ok := ParseFoldKey(k)
		if !ok || p != part || seq != 42 {
			t.Errorf("ParseFoldKey(%q) = %q, %d, %v", k, p, seq, ok)
		}
	}
	for _, k := range []string{"_pswap/fold/dt=1/0", "_pswap/fold/dt=1/-3", "_pswap/fold/dt=1/07", "_pswap/fold/x/5",
		"_pswap/fold/5", "_pswap/p/dt=1/5", "_pswap/fold/dt=1/5/", "_pswap/fold/dt=1/9223372036854775808"} {
		if p, seq, ok := ParseFoldKey(k); ok {
			t.Errorf("ParseFoldKey(%q) = %q, %d: want not a marker", k, p, seq)
		}
	}
}

// FuzzParseFoldKey: a key parses as a marker only if FoldKey gives it back.
func FuzzParseFoldKey(f *testing.F) {
	for _, s := range []string{"_pswap/fold/dt=2026-10-01/3", "_pswap/fold/dt=2026-10-01/hr=13/9", "_pswap/fold/a=b/0", "_pswap/fold//1", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		part, seq, ok := ParseFoldKey(key)
		if ok && FoldKey(part, seq) != key {
			t.Fatalf("ParseFoldKey(%q) = %q, %d, which FoldKey spells %q", key, part, seq, FoldKey(part, seq))
		}
	})
}
