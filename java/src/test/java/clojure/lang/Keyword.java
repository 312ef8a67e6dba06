package clojure.lang;

import java.util.Objects;

/**
 * Test-only stand-in for Clojure's keyword, so that tests can build a map the way Clojure code
 * hands one to Java ({@code {:host "h" :port 6380}}) without depending on Clojure. dibs knows
 * keywords only by this class name and by {@code toString()} returning {@code ":name"}.
 */
public final class Keyword {
    private final String name;

    private Keyword(String name) {
        this.name = name;
    }

    public static Keyword intern(String name) {
        return new Keyword(name);
    }

    @Override
    public String toString() {
        return ":" + name;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Keyword && ((Keyword) o).name.equals(name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(Keyword.class, name);
    }
}
