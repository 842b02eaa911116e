class VowelCount {

    int count(String text) {
        throw new UnsupportedOperationException("Delete this statement and write your own implementation.");
    }

    char mostCommon(String text) {
        throw new UnsupportedOperationException("Delete this statement and write your own implementation.");
    }

}
