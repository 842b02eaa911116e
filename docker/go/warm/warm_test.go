package warm

import "testing"

func TestDescribe(t *testing.T) {
	if got := Describe([]string{"b", "a"}); got != "a,b" {
		t.Fatalf("got %q", got)
	}
}

func BenchmarkDescribe(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Describe([]string{"b", "a"})
	}
}
