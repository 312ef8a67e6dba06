package dibs.spring;

/**
 * The application's {@code RedisConnectionDetails} bean, read through whichever Boot's type is
 * on the classpath ({@link RedisDetailsBoot3}, {@link RedisDetailsBoot4}).
 */
interface RedisDetailsSource {
    /**
     * @return what the bean gives; null when the application has no such bean, or only Boot's
     *     own one made from {@code spring.data.redis.*} (read from the properties themselves,
     *     which also say what the bean cannot: a url as given, a PEM bundle's CA)
     */
    RedisSettings.Details details();
}
