package gcsstore

// UseServerDelimiter makes s send the delimiter to an emulator too, for
// tests of the merge of a delimited page.
func UseServerDelimiter(s *Store) { s.serverDelimiter = true }
