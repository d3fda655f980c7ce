// Package tablemeta defines a table's metadata document,
// <table>/_pswap/table.json: the partition columns with their layout, and
// the structured schema that every generation of every partition holds.
// The schema's types are Iceberg's and its field ids Iceberg-compatible,
// so that the table maps one to one onto an Iceberg schema.
//
// The first commit to a table creates the document (create-if-absent)
// from its partition key and data; a table committed to before it existed
// gets one on its next commit, from that commit's data. Every commit is
// then checked against it (see Table.CheckKey, Table.Plan): the same
// schema passes, safe promotions are applied by converting the data, and
// anything else fails with ErrSchemaMismatch naming the column, unless
// the writer evolves the schema on purpose (Table.Evolve: new nullable
// columns), which replaces the document conditionally (Update).
//
// # Document
//
// One JSON object of valid UTF-8, at most MaxDocumentBytes, no duplicate
// keys, nothing after it, null never a value. Encode writes a canonical
// form (two-space indentation, fixed field order, trailing newline).
// testdata/valid_table.json is a complete example. Fields:
//
//	format             string: "pswap-table".
//	version            string: "major.minor", "1.2" for this package (1.1
//	                   added views, 1.2 published_ids). A reader rejects
//	                   another major (ErrUnsupportedVersion; a higher one
//	                   also strictjson.ErrNewerFormat: a newer pswap's);
//	                   a higher minor may only add fields, which a reader
//	                   ignores; in a document of its own minor an unknown
//	                   field is an error (a typo or tampering).
//	partition_columns  array, 1 to 8 objects, in key order:
//	  id               integer: a field id (same space as the schema's).
//	  name             string: the key's column name (dt in dt=2026-11-29).
//	  type             string: "string", "date" or "int".
//	  layout           string, optional: the Go time layout every value
//	                   fits exactly ("2006-01-02", "15"); omitted for a
//	                   free-form value. "date" needs a layout of whole days,
//	                   "int" one of digits only.
//	time_zone          string, optional: the IANA zone the time partitions
//	                   begin in ("Europe/Berlin": days begin at local
//	                   midnight, keys are local dates); absent for UTC.
//	                   Needs partition columns of a time layout; an
//	                   hourly layout only in a zone without DST.
//	schema_id          integer: 0, plus one for every evolution.
//	last_column_id     integer: the highest id ever assigned; ids are never
//	                   reused.
//	schema             array of fields, the data columns in file order.
//	views              object, optional: the views every writer publishes
//	                   (absent: written before views were recorded, which
//	                   reads as Iceberg only; see ViewsOf).
//	  iceberg          boolean: the Iceberg metadata (<table>/metadata/).
//	  delta            boolean: the Delta Lake log (<table>/_delta_log/).
//	  catalogs         array of strings, optional, at most MaxCatalogs,
//	                   sorted and unique: Iceberg catalog URLs, never with
//	                   a password (credentials come from the environment).
//	published_ids      boolean, optional (true or absent): the ids are the
//	                   ones the Iceberg metadata publishes and
//	                   last_column_id is at least its last-column-id (a
//	                   publish writes them back once, see
//	                   Table.PublishedIDs); absent, a table published
//	                   before table.json held ids may publish others.
//
// A field is an object:
//
//	id                 integer >= 1, unique in the document (nested fields
//	                   and partition columns included), <= last_column_id.
//	name               string: 1 to 256 bytes, no control characters;
//	                   unique among its siblings even case-insensitively.
//	type               a primitive type's name, or a nested type's object.
//	nullable           boolean: whether the column may hold nulls.
//	doc                string, optional: a description.
//
// Primitive types: boolean, int (32-bit), long (64-bit), float, double,
// decimal(P,S) (1 <= P <= 38, 0 <= S <= P, written without spaces),
// date, time (microseconds), timestamp and timestamptz (microseconds),
// timestamp_ns and timestamptz_ns (nanoseconds, Iceberg v3: read in
// documents written before nanosecond data made microsecond columns, never
// given to a new column), string, binary, fixed[L]. Nested types:
//
//	{"type": "struct", "fields": [field, ...]}
//	{"type": "list", "element_id": N, "element": type, "element_nullable": B}
//	{"type": "map", "key_id": N, "key": type, "value_id": M, "value": type, "value_nullable": B}
//
// A map's key is never null. Types nest at most MaxNesting deep.
//
// # Errors
//
// Decode, Encode and Validate report the first problem as an *Error
// naming the field by its JSON path:
//
//	table.json: schema[2].type: "decimal(40,2)": want precision 1..38 and scale 0..precision
//
// All match ErrInvalid.
package tablemeta
