package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Problem is one thing wrong with a document.
type Problem struct {
	Field string // JSON path of the field ("files[3].path"); "document" for the document as a whole
	Msg   string // what is wrong, in words
}

func (p *Problem) Error() string { return p.Field + ": " + p.Msg }

func problem(field, msg string, args ...any) *Problem {
	if len(args) > 0 {
		msg = fmt.Sprintf(msg, args...)
	}
	return &Problem{Field: field, Msg: msg}
}

// Limits bound a document.
type Limits struct {
	MaxBytes int // the document's size; 0: no bound
	MaxDepth int // nesting of objects and arrays, the top-level object being 1; 0: 32
}

func (l Limits) depth() int {
	if l.MaxDepth <= 0 {
		return 32
	}
	return l.MaxDepth
}

// Parse checks data as a whole (see the package documentation) and returns
// the fields of its top-level object.
func Parse(data []byte, lim Limits) (map[string]json.RawMessage, *Problem) {
	if lim.MaxBytes > 0 && len(data) > lim.MaxBytes {
		return nil, problem("document", "%d bytes, more than the limit of %d", len(data), lim.MaxBytes)
	}
	if !utf8.Valid(data) {
		return nil, problem("document", "not valid UTF-8")
	}
	if !json.Valid(data) {
		// Slow path, only to say what is wrong and where.
		if p := checkSyntax(data, lim.depth()); p != nil {
			return nil, p
		}
		return nil, problem("document", "invalid JSON")
	}
	if p := checkStructure(data, lim.depth()); p != nil {
		return nil, p
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		// checkStructure accepted it, so this cannot happen; report it anyway.
		return nil, problem("document", "%v", err)
	}
	return top, nil
}

// checkSyntax explains why a document that is not valid JSON is invalid: it
// walks it with the standard decoder until it finds a syntax error, a
// truncation, trailing data, too deep a nesting or a duplicate key.
func checkSyntax(data []byte, maxDepth int) *Problem {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(dec, err)
	}
	if tok != json.Delim('{') {
		return problem("document", "not a JSON object")
	}
	if p := walk(dec, tok, "", 1, maxDepth); p != nil {
		return p
	}
	if _, err := dec.Token(); err != io.EOF {
		return problem("document", "trailing data after the JSON object at byte %d", dec.InputOffset())
	}
	return nil
}

func walk(dec *json.Decoder, tok json.Token, path string, depth, maxDepth int) *Problem {
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar
	}
	if depth > maxDepth {
		return problem("document", "nested more than %d levels deep", maxDepth)
	}
	switch delim {
	case '{':
		seen := make(map[string]bool)
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return syntaxError(dec, err)
			}
			key, _ := kt.(string) // the decoder only yields strings in key position
			if seen[key] {
				return problem(Join(path, key), "duplicate key")
			}
			seen[key] = true
			vt, err := dec.Token()
			if err != nil {
				return syntaxError(dec, err)
			}
			if p := walk(dec, vt, Join(path, key), depth+1, maxDepth); p != nil {
				return p
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			vt, err := dec.Token()
			if err != nil {
				return syntaxError(dec, err)
			}
			if p := walk(dec, vt, Index(path, i), depth+1, maxDepth); p != nil {
				return p
			}
		}
	}
	// The closing delimiter (or the error that stopped dec.More).
	if _, err := dec.Token(); err != nil {
		return syntaxError(dec, err)
	}
	return nil
}

func syntaxError(dec *json.Decoder, err error) *Problem {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return problem("document", "truncated JSON")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return problem("document", "invalid JSON at byte %d: %v", se.Offset, se)
	}
	return problem("document", "invalid JSON at byte %d: %v", dec.InputOffset(), err)
}

// Join returns the JSON path of field name of the object at path. An empty
// name is shown as "" (a path names something even then).
func Join(path, name string) string {
	if name == "" {
		name = `""`
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

// Index returns the JSON path of element i of the array at path.
func Index(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}
