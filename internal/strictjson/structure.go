package strictjson

import (
	"encoding/json"
	"slices"
)

// checkStructure walks a document that is known to be valid JSON and valid
// UTF-8 (it compares keys byte for byte, where the decoder reads any invalid
// byte as U+FFFD) and enforces what the standard decoder does not: the
// document is one object, nested at most maxDepth deep, and no object has a
// duplicate key. It is a
// hand-written single pass because the decoder's token API is several times
// slower on large manifests.
func checkStructure(data []byte, maxDepth int) *Problem {
	var stack []*frame
	path := func(last string) string {
		p := ""
		for _, f := range stack[:len(stack)-1] {
			if f.obj {
				p = Join(p, f.key)
			} else {
				p = Index(p, f.index)
			}
		}
		return Join(p, last)
	}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return problem("document", "not a JSON object")
	}
	for ; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) >= maxDepth {
				return problem("document", "nested more than %d levels deep", maxDepth)
			}
			stack = append(stack, &frame{obj: c == '{', expectKey: c == '{'})
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			top := stack[len(stack)-1]
			if top.obj {
				top.expectKey = true
			} else {
				top.index++
			}
		case '"':
			end := stringEnd(data, i)
			top := stack[len(stack)-1]
			if top.obj && top.expectKey {
				key := unquote(data[i : end+1])
				if top.seen(key) {
					return problem(path(key), "duplicate key")
				}
				top.key, top.expectKey = key, false
			}
			i = end
		}
	}
	return nil
}

// countElements returns the number of elements of a valid JSON array.
func countElements(arr []byte) int {
	depth, n, empty := 0, 0, true
	for i := 0; i < len(arr); i++ {
		switch arr[i] {
		case '[', '{':
			depth++
			if depth > 1 {
				empty = false
			}
		case ']', '}':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		case '"':
			empty = false
			i = stringEnd(arr, i)
		case ' ', '\t', '\n', '\r':
		default:
			empty = false
		}
	}
	if empty {
		return 0
	}
	return n + 1
}

// stringEnd returns the index of the quote that closes the JSON string
// starting at data[start].
func stringEnd(data []byte, start int) int {
	for j := start + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return len(data) - 1 // unreachable for valid JSON
}

func unquote(q []byte) string {
	for _, c := range q {
		if c == '\\' {
			var s string
			_ = json.Unmarshal(q, &s)
			return s
		}
	}
	return string(q[1 : len(q)-1])
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// frame is an open object or array during checkStructure.
type frame struct {
	obj       bool
	expectKey bool
	key       string              // the current key (objects)
	index     int                 // the current element (arrays)
	keys      []string            // keys seen so far (small objects)
	keySet    map[string]struct{} // keys seen so far (large objects)
}

// smallObject is the number of keys up to which a linear search beats a map.
const smallObject = 16

// seen records key and reports whether the object already had it.
func (f *frame) seen(key string) bool {
	if f.keySet != nil {
		if _, ok := f.keySet[key]; ok {
			return true
		}
		f.keySet[key] = struct{}{}
		return false
	}
	if slices.Contains(f.keys, key) {
		return true
	}
	f.keys = append(f.keys, key)
	if len(f.keys) > smallObject {
		f.keySet = make(map[string]struct{}, 2*len(f.keys))
		for _, k := range f.keys {
			f.keySet[k] = struct{}{}
		}
		f.keys = nil
	}
	return false
}
