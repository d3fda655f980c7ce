// Package partition names the partitions of a table and derives them from
// run intervals.
//
// A partition is identified by a Hive-style [Key] such as
// "dt=2026-11-29/hr=13": up to eight name=value columns separated by "/".
// Values are escaped the way Hive's FileUtils.escapePathName does (%XX with
// uppercase hex for `"#%'*/:=?\{[]^`, DEL and control characters), so the
// canonical form of a key is the folder name Hive, Spark, Trino and DuckDB
// expect. [Parse] is strict: a key must never be able to escape its table
// root or collide with the "_"-prefixed folders pswap reserves for itself,
// and every key it accepts survives a round trip: Parse(k.String()) == k.
// [Validate] additionally requires the canonical form.
//
// Keys are derived from the interval a task owns, never from the wall clock:
// nothing in this package reads the current time. An [Interval] is a
// half-open UTC range [Start, End) parsed from ISO 8601 by [ParseInterval]
// ("2026-11-29/2026-11-30", "2026-11-29T13:00:00Z/PT1H"). A [Layout] maps an
// interval of exactly one [Grain] (hour, day or month), aligned to that
// grain, to its key with [Layout.Key]; [Layout.Keys] splits a longer aligned
// range into its partitions and [Layout.Interval] inverts the mapping.
//
// A layout's partitions begin in UTC unless it has a Zone (an IANA name,
// checked by [ParseZone]): then a day is the local calendar day, from local
// midnight to local midnight (23 or 25 hours on the days daylight saving
// time begins or ends), and its key is the local date; [Layout.ParseInterval]
// and [ParseIntervalIn] read dates and calendar durations in the zone, so
// Airflow's "2026-03-29T00:00:00+01:00/P1D" and Dagster's
// "2026-03-29T00:00:00+01:00/2026-03-30T00:00:00+02:00" both name
// dt=2026-03-29 in Europe/Berlin. Hourly layouts in a zone need a fixed UTC
// offset (since 1970): where DST repeats a local hour, its two partitions
// would share a key, so such a layout is refused. Zones come from the
// database embedded in the binary (time/tzdata) when the machine has none.
package partition
