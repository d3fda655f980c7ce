package strictjson

import (
	"fmt"

	"github.com/pswap/pswap/internal/errkind"
)

// ErrNewerFormat is matched by the error of a reader that met an on-store
// document (a manifest, a pointer, table.json, the Iceberg metadata pswap
// reads back) of a newer format or major version than it knows: a newer
// pswap wrote it, and this one must be upgraded to read it. It is neither
// another writer's document nor a damaged one. Kind: permanent.
var ErrNewerFormat = errkind.New("written by a newer pswap", errkind.ErrPermanent)

// NewerFormatProblem is the words of every refusal of a newer document,
// format its format or version as the document spells it ("2.0",
// "pswap/2"): "written by a newer pswap (format 2.0); upgrade pswap to
// read it". The error that carries them matches ErrNewerFormat.
func NewerFormatProblem(format string) string {
	return fmt.Sprintf("%s (format %s); upgrade pswap to read it", ErrNewerFormat, format)
}

// NewerFormat is the error of a reader that met doc ("pointer",
// "table.json") of a newer format: it matches ErrNewerFormat.
func NewerFormat(doc, format string) error {
	return &newerError{doc: doc, format: format}
}

type newerError struct{ doc, format string }

func (e *newerError) Error() string { return e.doc + ": " + NewerFormatProblem(e.format) }
func (e *newerError) Unwrap() error { return ErrNewerFormat }
