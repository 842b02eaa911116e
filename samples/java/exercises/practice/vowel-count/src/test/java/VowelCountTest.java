import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

public class VowelCountTest {

    private final VowelCount vowelCount = new VowelCount();

    @Test
    @DisplayName("empty text has no vowels")
    public void emptyText() {
        assertThat(vowelCount.count("")).isEqualTo(0);
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("lowercase and uppercase vowels are counted")
    public void mixedCase() {
        assertThat(vowelCount.count("Orange Umbrella")).isEqualTo(6);
    }

    @Disabled("Remove to run test") @Test
    @DisplayName("y and other characters are not vowels")
    public void notVowels() {
        assertThat(vowelCount.count("rhythm, 123!")).isEqualTo(0);
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("most common vowel")
    public void mostCommonVowel() {
        assertThat(vowelCount.mostCommon("banana bread")).isEqualTo('a');
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("ties go to the vowel first in the alphabet")
    public void mostCommonTie() {
        assertThat(vowelCount.mostCommon("OUI OUI")).isEqualTo('i');
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("text without vowels has no most common vowel")
    public void mostCommonWithoutVowels() {
        assertThat(vowelCount.mostCommon("gym")).isEqualTo('-');
    }

}
