package swap

// For the external tests: the staged record's codec and the checks a
// commit of staged files makes, which only this package calls.
var (
	EncodeStaged = encodeStaged
	DecodeStaged = decodeStaged
	CheckFiles   = checkFiles
)

const (
	FormatStaged            = formatStaged
	DefaultListReadAttempts = defaultListReadAttempts
)
