import java.util.ArrayDeque;
import java.util.Deque;

class StackCalc {

    int evaluate(String expression) {
        Deque<Integer> stack = new ArrayDeque<>();
        for (String token : expression.trim().split(" ")) {
            switch (token) {
                case "+", "-", "*" -> {
                    if (stack.size() < 2) {
                        throw new IllegalArgumentException("not enough operands");
                    }
                    int right = stack.pop();
                    int left = stack.pop();
                    stack.push(apply(token, left, right));
                }
                default -> stack.push(parse(token));
            }
        }
        if (stack.size() > 1) {
            throw new IllegalArgumentException("too many values");
        }
        return stack.pop();
    }

    private static int apply(String operator, int left, int right) {
        return switch (operator) {
            case "+" -> left + right;
            case "-" -> left - right;
            default -> left * right;
        };
    }

    private static int parse(String token) {
        try {
            return Integer.parseInt(token);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("unknown token");
        }
    }

}
