package python

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pswap/pswap/internal/testing/srcdir"
	"github.com/pswap/pswap/internal/testing/testenv"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(srcdir.Of(file), "..", "..")
}

// run runs a command with env and fails the test with its output.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot()
	if env != nil {
		cmd.Env = env
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, tail(out.String(), 8000))
	}
	return out.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// wheelhouse is the folder of the tests' dependencies: $PSWAP_PYWHEELHOUSE,
// else what scripts/pywheelhouse.sh prints.
func wheelhouse(t *testing.T) string {
	if d := os.Getenv("PSWAP_PYWHEELHOUSE"); d != "" {
		return d
	}
	cmd := exec.Command("bash", filepath.Join(repoRoot(), "scripts", "pywheelhouse.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/pywheelhouse.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestWheelInCleanVenv builds the wheel, installs it where there is no Go
// and no index, and runs the package's type check and tests.
func TestWheelInCleanVenv(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("builds the linux x86_64 wheel")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	dist := filepath.Join(dir, "dist")
	out := run(t, nil, "bash", filepath.Join(repoRoot(), "scripts", "wheels.sh"), dist, "linux-amd64")
	wheel := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	fi, err := os.Stat(wheel)
	if err != nil || !strings.HasSuffix(wheel, "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_2_x86_64.whl") {
		t.Fatalf("wheels.sh printed %q: %v", out, err)
	}
	t.Logf("wheel %s: %.1f MB", filepath.Base(wheel), float64(fi.Size())/1e6)

	// A clean environment: no system site-packages; PATH without Go.
	venv := filepath.Join(dir, "venv")
	run(t, nil, "python3", "-m", "venv", venv)
	bin := filepath.Join(venv, "bin")
	env := []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir, "PIP_NO_INDEX=1",
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1", "TMPDIR=" + os.TempDir()}
	if _, err := exec.LookPath(filepath.Join(bin, "go")); err == nil {
		t.Fatal("go is on the test environment's PATH")
	}
	run(t, env, filepath.Join(bin, "pip"), "install", "--no-index", "--no-deps", wheel)
	run(t, env, filepath.Join(bin, "pip"), "install", "--no-index", "--find-links", wheelhouse(t),
		"-r", filepath.Join(repoRoot(), "integration", "python", "requirements.txt"))
	// The binary came with the wheel, into the environment's bin/.
	if _, err := os.Stat(filepath.Join(bin, "pswap")); err != nil {
		t.Fatalf("the wheel installed no pswap binary: %v", err)
	}
	// The installed package passes mypy --strict as a user's code sees it.
	run(t, append(env, "MYPYPATH="), filepath.Join(bin, "mypy"), "--strict", "--cache-dir", filepath.Join(dir, "mypy"),
		"--ignore-missing-imports", "-p", "pswap")

	env = append(env, "PSWAP_EXPECT_WHEEL=1")
	if testenv.S3Enabled() {
		env = append(env, "PSWAP_TEST_S3_URL="+testenv.S3URL(t))
		for _, k := range []string{"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
			"AWS_REQUEST_CHECKSUM_CALCULATION", "AWS_RESPONSE_CHECKSUM_VALIDATION"} {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	if e := os.Getenv("PSWAP_ENGINES"); e != "" {
		env = append(env, "PSWAP_ENGINES_PYTHON="+filepath.Join(e, "venv", "bin", "python"))
	}
	out = run(t, env, filepath.Join(bin, "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
		"--basetemp", filepath.Join(dir, "pytest"), filepath.Join(repoRoot(), "python", "tests"))
	t.Logf("pytest:\n%s", tail(out, 3000))
}
