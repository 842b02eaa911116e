package wordtally

import (
	"slices"
	"strings"
	"unicode"
)

// WordCount is one distinct word and the number of times it appears.
type WordCount struct {
	Word  string
	Count int
}

// Tally counts the case-insensitive words of text, most frequent first and
// alphabetically among equal counts.
func Tally(text string) []WordCount {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	counts := map[string]int{}
	for _, word := range words {
		counts[word]++
	}
	result := make([]WordCount, 0, len(counts))
	for word, count := range counts {
		result = append(result, WordCount{Word: word, Count: count})
	}
	slices.SortFunc(result, func(a, b WordCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Word, b.Word)
	})
	return result
}
