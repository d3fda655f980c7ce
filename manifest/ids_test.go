package manifest

import (
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/pswap/pswap/partition"
)

func TestValidateGenerationID(t *testing.T) {
	v4 := uuid.NewString()
	cases := []struct {
		id, want string // want "" = valid
	}{
		{genA, ""},
		{NewGenerationID(), ""},
		{"", "empty"},
		{strings.ToUpper(genA), "not in canonical lowercase form"},
		{"urn:uuid:" + genA, "canonical 8-4-4-4-12 form"},
		{"{" + genA + "}", "canonical 8-4-4-4-12 form"},
		{strings.ReplaceAll(genA, "-", ""), "canonical 8-4-4-4-12 form"},
		{genA[:35] + "g", "not a UUID"},
		{strings.Replace(genA, "-", "x", 1), "not a UUID"},
		{v4, "UUID version 4, want 7"},
		{"00000000-0000-0000-0000-000000000000", "not an RFC 9562 variant"},
		{"0193a1b2-3c4d-7e5f-0a6b-7c8d9e0f1a2b", "not an RFC 9562 variant"},
		{"../../../../../../../../../etc/passw", "not a UUID"},
	}
	for _, tc := range cases {
		err := ValidateGenerationID(tc.id)
		if tc.want == "" {
			if err != nil {
				t.Errorf("ValidateGenerationID(%q) = %v, want nil", tc.id, err)
			}
			continue
		}
		checkInvalid(t, err, tc.want)
	}
}

func TestNewGenerationIDOrdered(t *testing.T) {
	prev := NewGenerationID()
	for range 1000 {
		id := NewGenerationID()
		if err := ValidateGenerationID(id); err != nil {
			t.Fatal(err)
		}
		if id <= prev {
			t.Fatalf("ids not increasing: %s then %s", prev, id)
		}
		prev = id
	}
}

func TestGenerationTime(t *testing.T) {
	before := time.Now().Truncate(time.Millisecond)
	id := NewGenerationID()
	after := time.Now()
	got, err := GenerationTime(id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Before(before) || got.After(after) || got.Location() != time.UTC {
		t.Errorf("GenerationTime = %v, want a UTC time in [%v, %v]", got, before, after)
	}
	// genA's timestamp is 0x0193a1b23c4d ms after the epoch.
	got, err = GenerationTime(genA)
	if want := time.UnixMilli(0x0193a1b23c4d).UTC(); err != nil || !got.Equal(want) {
		t.Errorf("GenerationTime(%s) = %v, %v, want %v", genA, got, err, want)
	}
	if _, err := GenerationTime("x"); !errors.Is(err, ErrInvalid) {
		t.Errorf("GenerationTime(x) error = %v", err)
	}
}

func TestValidateRunID(t *testing.T) {
	for _, ok := range []string{"", "run-1", "scheduled__2026-11-29T13:00:00+00:00", "with space", "ünïcödé 文字", strings.Repeat("r", 256)} {
		if err := ValidateRunID(ok); err != nil {
			t.Errorf("ValidateRunID(%q) = %v", ok, err)
		}
	}
	for id, want := range map[string]string{
		strings.Repeat("r", 257): "longer than 256 bytes",
		"a\nb":                   "non-printable character U+000A",
		"a\x00":                  "non-printable character U+0000",
		"a\x7f":                  "non-printable character U+007F",
		"\u200bzero-width":       "non-printable character U+200B",
		"a\u202eb":               "non-printable character U+202E",
		"a\xc3":                  "not valid UTF-8",
		"tab\there":              "U+0009",
	} {
		checkInvalid(t, ValidateRunID(id), want)
	}
}

func TestChecksums(t *testing.T) {
	sum := sha256.Sum256([]byte("test"))
	got := SHA256Checksum(sum[:])
	if got != sumA {
		t.Errorf("SHA256Checksum = %q, want %q", got, sumA)
	}
	if err := ValidateFileChecksum(got); err != nil {
		t.Errorf("ValidateFileChecksum(%q) = %v", got, err)
	}
	for s, want := range map[string]string{
		"":                           "must start",
		"sha256:":                    "has 0 hex digits",
		"sha256:" + sumA[7:] + "0":   "has 65 hex digits",
		"SHA256:" + sumA[7:]:         "must start",
		"sha256:" + sumA[7:70] + "G": "not lowercase hex",
		"sha1:" + sumA[7:]:           "must start",
		" sha256:" + sumA[7:]:        "must start",
	} {
		checkInvalid(t, ValidateFileChecksum(s), want)
	}
	for _, ok := range []string{sumC, "a:0123456789abcdef", strings.Repeat("z", 32) + ":" + strings.Repeat("0f", 64), sumA, "x-9:" + strings.Repeat("a", 16)} {
		if err := ValidateContentChecksum(ok); err != nil {
			t.Errorf("ValidateContentChecksum(%q) = %v", ok, err)
		}
	}
	for s, want := range map[string]string{
		"":                             "empty",
		"x":                            "must have the form",
		"x_y:0123456789abcdef":         "only [a-z0-9-]",
		"x:y:0123456789abcdef":         "not lowercase hex",
		"x:0123456789ABCDEF":           "not lowercase hex",
		"x:" + strings.Repeat("0", 15): "has 15 hex digits",
	} {
		checkInvalid(t, ValidateContentChecksum(s), want)
	}
}

func TestValidateFilePath(t *testing.T) {
	for _, ok := range []string{"part-00000.parquet", "a/b/c.parquet", "bucket=3/part.parquet", "x_y.parquet", "a.b", "é", strings.Repeat("a", 512)} {
		if err := ValidateFilePath(ok); err != nil {
			t.Errorf("ValidateFilePath(%q) = %v", ok, err)
		}
	}
	// The rejections are covered path by path in TestDecodeRejects; here,
	// only that the standalone form names the value.
	checkInvalid(t, ValidateFilePath("../x"), `manifest: file path "../x": escapes the generation prefix`)
}

func TestErrorUnwrap(t *testing.T) {
	m := validManifest()
	m.Partition = "dt=a/../b"
	err := m.Validate()
	checkInvalid(t, err, "manifest: partition: ")
	var fe *Error
	if !errors.As(err, &fe) || fe.Cause == nil || fe.Field != "partition" {
		t.Fatalf("partition error %#v lacks its cause", err)
	}
	if !errors.Is(err, partition.ErrInvalidKey) {
		t.Error("errors.Is does not reach the partition package's sentinel")
	}
	if errors.Is(err, ErrUnsupportedVersion) {
		t.Error("a partition error matches ErrUnsupportedVersion")
	}
	if !errors.Is(ErrUnsupportedVersion, ErrInvalid) {
		t.Error("ErrUnsupportedVersion does not match ErrInvalid")
	}
}
