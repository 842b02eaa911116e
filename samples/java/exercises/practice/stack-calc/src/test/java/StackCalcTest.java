import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

public class StackCalcTest {

    private final StackCalc calc = new StackCalc();

    @Test
    @DisplayName("a single number is its own value")
    public void singleNumber() {
        assertThat(calc.evaluate("42")).isEqualTo(42);
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("addition")
    public void addition() {
        assertThat(calc.evaluate("3 4 +")).isEqualTo(7);
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("subtraction keeps the operand order")
    public void subtraction() {
        assertThat(calc.evaluate("10 4 -")).isEqualTo(6);
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("several operators and negative numbers")
    public void severalOperators() {
        assertThat(calc.evaluate("3 4 + -2 *")).isEqualTo(-14);
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("an operator without two operands is an error")
    public void notEnoughOperands() {
        assertThatExceptionOfType(IllegalArgumentException.class)
                .isThrownBy(() -> calc.evaluate("5 +"))
                .withMessage("not enough operands");
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("an unknown token is an error")
    public void unknownToken() {
        assertThatExceptionOfType(IllegalArgumentException.class)
                .isThrownBy(() -> calc.evaluate("2 3 /"))
                .withMessage("unknown token");
    }

    @Disabled("Remove to run test")
    @Test
    @DisplayName("values left over are an error")
    public void tooManyValues() {
        assertThatExceptionOfType(IllegalArgumentException.class)
                .isThrownBy(() -> calc.evaluate("1 2 3 +"))
                .withMessage("too many values");
    }

}
