package catalog

import (
	"errors"
	"strings"
	"testing"
)

// withoutDriver unregisters scheme's driver for the test, and restores
// the registry as it was after it.
func withoutDriver(t *testing.T, scheme string) {
	driversMu.Lock()
	d, ok := drivers[scheme]
	delete(drivers, scheme)
	driversMu.Unlock()
	t.Cleanup(func() {
		driversMu.Lock()
		defer driversMu.Unlock()
		delete(drivers, scheme)
		if ok {
			drivers[scheme] = d
		}
	})
}

// TestNoDriver: one of pswap's schemes whose driver the program does not
// link is ErrNoDriver, naming the import to add.
func TestNoDriver(t *testing.T) {
	for raw, pkg := range map[string]string{
		"sql+sqlite:///x.db?catalog=c&namespace=n&table=t":    "github.com/pswap/pswap/catalog/sqlcat",
		"sql+postgresql://h/db?catalog=c&namespace=n&table=t": "github.com/pswap/pswap/catalog/sqlcat",
		"rest+https://h/?namespace=n&table=t":                 "github.com/pswap/pswap/catalog/restcat",
	} {
		scheme, _, _ := strings.Cut(raw, ":")
		withoutDriver(t, scheme)
		_, err := Open(raw)
		if !errors.Is(err, ErrNoDriver) || errors.Is(err, ErrBadURL) || !strings.Contains(err.Error(), `import _ "`+pkg+`"`) {
			t.Errorf("%s without its driver: %v", raw, err)
		}
		if _, err := Public(raw); !errors.Is(err, ErrNoDriver) {
			t.Errorf("Public(%s) without its driver: %v", raw, err)
		}
	}
}

// TestRegisterDriverPanics: a scheme registered twice, an empty or upper
// case scheme, and a nil driver are programming errors.
func TestRegisterDriverPanics(t *testing.T) {
	withoutDriver(t, "x+test")
	RegisterDriver("x+test", noDriver{})
	for name, f := range map[string]func(){
		"twice":      func() { RegisterDriver("x+test", noDriver{}) },
		"empty":      func() { RegisterDriver("", noDriver{}) },
		"upper case": func() { RegisterDriver("X+Test", noDriver{}) },
		"nil":        func() { RegisterDriver("y+test", nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

type noDriver struct{ Driver }
