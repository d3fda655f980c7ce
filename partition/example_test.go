package partition_test

import (
	"errors"
	"fmt"

	"github.com/pswap/pswap/partition"
)

func ExampleParse() {
	k, err := partition.Parse("dt=2026-11-29/hr=13")
	if err != nil {
		panic(err)
	}
	for _, c := range k.Columns() {
		fmt.Println(c.Name, c.Value)
	}
	fmt.Println(k)

	// Values are escaped as Hive does; String is the canonical form.
	k, _ = partition.New(partition.Column{Name: "src", Value: "db1:orders"})
	fmt.Println(k)

	_, err = partition.Parse("dt=2026-11-29/../etc")
	fmt.Println(errors.Is(err, partition.ErrInvalidKey))
	fmt.Println(err)
	// Output:
	// dt 2026-11-29
	// hr 13
	// dt=2026-11-29/hr=13
	// src=db1%3Aorders
	// true
	// invalid partition key "dt=2026-11-29/../etc": segment ".." is not name=value
}

func ExampleValidate() {
	fmt.Println(partition.Validate("dt=2026-11-29"))
	fmt.Println(partition.Validate("src=db1:orders"))
	// Output:
	// <nil>
	// invalid partition key "src=db1:orders": not in canonical form (want "src=db1%3Aorders")
}

func ExampleLayout_Key() {
	iv, err := partition.ParseInterval("2026-11-29T13:00:00Z/PT1H")
	if err != nil {
		panic(err)
	}
	hourly := partition.Layout{Grain: partition.Hour}
	k, err := hourly.Key(iv)
	fmt.Println(k, err)

	custom, err := partition.ParseLayout("year=2006/month=01/day=02")
	if err != nil {
		panic(err)
	}
	day, _ := partition.ParseInterval("2026-11-29/P1D")
	k, err = custom.Key(day)
	fmt.Println(k, err)

	// The zero Layout is daily: a one-hour interval is not one partition.
	_, err = partition.Layout{}.Key(iv)
	fmt.Println(errors.Is(err, partition.ErrUnaligned))
	fmt.Println(err)
	// Output:
	// dt=2026-11-29/hr=13 <nil>
	// year=2026/month=11/day=29 <nil>
	// true
	// interval not aligned to the partition grain: start 2026-11-29T13:00:00Z of interval 2026-11-29T13:00:00Z/2026-11-29T14:00:00Z is not on a day boundary in UTC
}

func ExampleLayout_Keys() {
	iv, _ := partition.ParseInterval("2026-11-29/P3D")
	keys, err := partition.Layout{}.Keys(iv)
	fmt.Println(keys, err)
	// Output:
	// [dt=2026-11-29 dt=2026-11-30 dt=2026-12-01] <nil>
}

func ExampleLayout_Interval() {
	iv, err := partition.Layout{Grain: partition.Hour}.Interval(partition.MustParse("dt=2026-11-29/hr=13"))
	fmt.Println(iv, err)
	// Output:
	// 2026-11-29T13:00:00Z/2026-11-29T14:00:00Z <nil>
}

func ExampleParseInterval() {
	for _, s := range []string{
		"2026-11-29/2026-11-30",
		"2026-11-29/P1D",
		"2026-11-29T14:00:00+01:00/PT1H",
		"2026-11-29T13:00:00/PT1H",
	} {
		iv, err := partition.ParseInterval(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(iv)
	}
	// Output:
	// 2026-11-29/2026-11-30
	// 2026-11-29/2026-11-30
	// 2026-11-29T13:00:00Z/2026-11-29T14:00:00Z
	// invalid interval "2026-11-29T13:00:00/PT1H": time "2026-11-29T13:00:00" has no UTC offset: add Z or +hh:mm
}
