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
