package wordtally

var testCases = []struct {
	description string
	input       string
	expected    []WordCount
}{
	{
		description: "text without words",
		input:       "  ,.!  ",
		expected:    []WordCount{},
	},
	{
		description: "one word",
		input:       "hello",
		expected:    []WordCount{{Word: "hello", Count: 1}},
	},
	{
		description: "repeated word",
		input:       "go go go",
		expected:    []WordCount{{Word: "go", Count: 3}},
	},
	{
		description: "case is ignored",
		input:       "Go go GO",
		expected:    []WordCount{{Word: "go", Count: 3}},
	},
	{
		description: "punctuation separates words",
		input:       "red,blue;red!",
		expected: []WordCount{
			{Word: "red", Count: 2},
			{Word: "blue", Count: 1},
		},
	},
	{
		description: "equal counts in alphabetical order",
		input:       "pear apple fig apple pear 42",
		expected: []WordCount{
			{Word: "apple", Count: 2},
			{Word: "pear", Count: 2},
			{Word: "42", Count: 1},
			{Word: "fig", Count: 1},
		},
	},
}
