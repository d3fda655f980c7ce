package strictjson

import "testing"

func TestCountElements(t *testing.T) {
	for arr, want := range map[string]int{
		`[]`: 0, "[ \n ]": 0, `[1]`: 1, `[{}, {}]`: 2, `["a,b", "]"]`: 2, `[[1,2],[3]]`: 2,
		`[{"a": [1, 2, 3]}, null, "x\"],"]`: 3, `[[]]`: 1, `[{}]`: 1,
	} {
		if got := countElements([]byte(arr)); got != want {
			t.Errorf("countElements(%s) = %d, want %d", arr, got, want)
		}
	}
}
