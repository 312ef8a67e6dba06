package dibs.example;

import static org.springframework.security.config.Customizer.withDefaults;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The rule the starter's README gives for the actuator, as a service with Spring Security would
 * write it: health open, the force release for the role DIBS_OPERATOR only, the rest of the
 * actuator for any authenticated user. Two users: a reader without the role, and an operator.
 */
@Configuration(proxyBeanMethods = false)
@Profile("secured")
class SecuredActuator {
    static final String READER = "reader";
    static final String OPERATOR = "operator";
    static final String PASSWORD = "pw-Never-Shown";

    // readme:begin actuator-security
    @Bean
    SecurityFilterChain actuator(HttpSecurity http) throws Exception {
        return http.securityMatcher("/actuator/**")
                .authorizeHttpRequests(requests -> requests.requestMatchers("/actuator/health/**", "/actuator/health")
                        .permitAll()
                        .requestMatchers("/actuator/dibsrelease/**")
                        .hasRole("DIBS_OPERATOR")
                        .anyRequest()
                        .authenticated())
                .httpBasic(withDefaults())
                .csrf(csrf -> csrf.ignoringRequestMatchers("/actuator/**"))
                .build();
    }
    // readme:end

    @Bean
    InMemoryUserDetailsManager users() {
        return new InMemoryUserDetailsManager(
                User.withUsername(READER)
                        .password("{noop}" + PASSWORD)
                        .roles("ACTUATOR")
                        .build(),
                User.withUsername(OPERATOR)
                        .password("{noop}" + PASSWORD)
                        .roles("ACTUATOR", "DIBS_OPERATOR")
                        .build());
    }
}
