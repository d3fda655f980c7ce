package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/pswap/pswap/internal/testing/testenv"
)

func init() {
	passEnv = append(passEnv, "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY",
		"AZURE_STORAGE_SAS_TOKEN", testenv.EnvAzure)
}

// TestScriptsAzure runs the CLI scripts against Azure Blob Storage
// (Azurite in scripts/test.sh), each under its own prefix of a fresh
// container.
func TestScriptsAzure(t *testing.T) {
	if !testenv.AzureEnabled() {
		t.Skip("Azure tests need Azurite: run scripts/test.sh, or start scripts/azurite.sh and load its env file")
	}
	t.Parallel()
	base := testenv.AzureURL(t)
	testscript.Run(t, scriptParams(t, func(env *testscript.Env) string {
		return base + "/" + strings.TrimPrefix(filepath.Base(env.WorkDir), "script-") + "/sales"
	}))
}
