// Package strictjson reads pswap's on-store JSON documents (manifests,
// pointers, staged records, table.json) strictly and alike: one reader, so
// that the documents cannot drift apart in what they accept.
//
// Parse checks a document as a whole: at most a given size, valid UTF-8,
// one JSON object and nothing after it, nested at most a given depth, no
// object with a duplicate key (readers differ on which duplicate wins, so a
// duplicate could show one tool another file than another). A Reader then
// takes typed fields out of an object: names match exactly, null is never a
// value, a missing required field, a wrong type or a field the document's
// version does not know is a Problem naming the field by its JSON path
// ("files[3].path"). The first problem wins; callers wrap it in their own
// error type.
package strictjson
