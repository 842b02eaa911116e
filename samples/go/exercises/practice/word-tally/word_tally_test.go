package wordtally

import (
	"testing"
)

func TestTally(t *testing.T) {
	for _, tc := range testCases {
		t.Run(tc.description, func(t *testing.T) {
			if actual := Tally(tc.input); !sameCounts(actual, tc.expected) {
				t.Fatalf("Tally(%q) = %v, want: %v", tc.input, actual, tc.expected)
			}
		})
	}
}

// sameCounts treats a nil result and an empty result as equal.
func sameCounts(a, b []WordCount) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func BenchmarkTally(b *testing.B) {
	if testing.Short() {
		b.Skip("skipping benchmark in short mode.")
	}
	for i := 0; i < b.N; i++ {
		for _, tc := range testCases {
			Tally(tc.input)
		}
	}
}
