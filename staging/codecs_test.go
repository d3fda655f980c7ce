package staging

import (
	"os"
	"os/exec"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// TestRegisterCodecsExplicit: importing the package leaves arrow-go's
// codec registry alone (checked in a fresh process, where no test has
// called New yet); RegisterCodecs adds the LZ4 codec.
func TestRegisterCodecsExplicit(t *testing.T) {
	if os.Getenv("PSWAP_TEST_FRESH_REGISTRY") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRegisterCodecsExplicit$", "-test.count=1")
		cmd.Env = append(os.Environ(), "PSWAP_TEST_FRESH_REGISTRY=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("fresh process: %v\n%s", err, out)
		}
		return
	}
	if _, err := compress.GetCodec(compress.Codecs.Lz4); err == nil {
		t.Fatal("LZ4 is registered before RegisterCodecs")
	}
	RegisterCodecs()
	RegisterCodecs()
	if _, err := compress.GetCodec(compress.Codecs.Lz4); err != nil {
		t.Fatalf("after RegisterCodecs: %v", err)
	}
}
