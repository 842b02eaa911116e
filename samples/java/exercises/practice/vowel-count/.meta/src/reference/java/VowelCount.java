class VowelCount {

    private static final String VOWELS = "aeiou";

    int count(String text) {
        int[] tally = tally(text);
        int total = 0;
        for (int n : tally) {
            total += n;
        }
        return total;
    }

    char mostCommon(String text) {
        int[] tally = tally(text);
        char best = '-';
        int bestCount = 0;
        for (int i = 0; i < VOWELS.length(); i++) {
            if (tally[i] > bestCount) {
                best = VOWELS.charAt(i);
                bestCount = tally[i];
            }
        }
        return best;
    }

    private static int[] tally(String text) {
        int[] tally = new int[VOWELS.length()];
        for (char c : text.toLowerCase().toCharArray()) {
            int index = VOWELS.indexOf(c);
            if (index >= 0) {
                tally[index]++;
            }
        }
        return tally;
    }

}
