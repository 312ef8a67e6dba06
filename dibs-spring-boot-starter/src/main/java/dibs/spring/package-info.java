/**
 * dibs in Spring Boot 3.5 and 4.0: {@link dibs.spring.DibsAutoConfiguration} makes one
 * {@link dibs.DibsClient} bean from {@code spring.data.redis.*} and {@code dibs.*};
 * {@link dibs.spring.DibsMetricsAutoConfiguration} adds Micrometer meters when there is a
 * registry; {@link dibs.spring.DibsActuatorAutoConfiguration} adds the {@code dibs} health
 * indicator and the {@code /actuator/dibs} endpoint when Actuator is present.
 */
package dibs.spring;
