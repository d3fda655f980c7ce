package gcsstore

// UseServerDelimiter makes s send the delimiter to an emulator too, for
// tests of the merge of a delimited page.
func UseServerDelimiter(s *Store) { s.serverDelimiter = true }

// AsRealGCS makes s take the paths it takes on real GCS (Copy's rewrite
// with its preconditions) although its endpoint is a test server.
func AsRealGCS(s *Store) { s.emulator = false }
