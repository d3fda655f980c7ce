package lakehouse

// Hooks for the tests in package lakehouse_test.

// IcebergType is the Iceberg type of an Arrow column.
var IcebergType = icebergType
