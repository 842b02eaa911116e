package wordtally

// WordCount is one distinct word and the number of times it appears.
type WordCount struct {
	Word  string
	Count int
}

func Tally(text string) []WordCount {
	panic("Please implement the Tally function")
}
