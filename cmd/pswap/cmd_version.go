package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/pswap/pswap/swap"
)

func init() { registerCommand(newVersionCmd) }

// versionJSON is the --json document of version.
type versionJSON struct {
	Version  string `json:"version"`  // the writer version recorded in manifests
	Module   string `json:"module"`   // the module version of the build ("(devel)" from a checkout)
	Revision string `json:"revision"` // VCS revision of the build, when known
	Go       string `json:"go"`
}

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version of pswap",
		Example: "  pswap version\n  pswap version --json",
		Args:    cobra.NoArgs,
		RunE: runE(func(*cobra.Command, []string) error {
			v := buildVersion()
			if a.json {
				return printJSON(a.stdout, v)
			}
			_, err := fmt.Fprintln(a.stdout, versionLine())
			return err
		}),
	}
}

// buildVersion describes this build.
func buildVersion() versionJSON {
	v := versionJSON{Version: swap.WriterVersion, Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		v.Module = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.Revision = s.Value
			}
		}
	}
	return v
}

// versionLine is the human form: "pswap/0.3.0 (abc123) go1.25.0", as both
// 'pswap version' and 'pswap --version' print it.
func versionLine() string {
	v := buildVersion()
	line := v.Version
	if v.Revision != "" {
		line += " (" + v.Revision + ")"
	}
	return line + " " + v.Go
}
