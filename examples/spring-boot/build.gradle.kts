// Gradle build of the example, with the same dependencies and jar as pom.xml.
//
// NOTE: written to match pom.xml but never run on the machines dibs is developed on (no Gradle
// there); pom.xml is the build that scripts/spring-boot-check.sh runs. Meant for Gradle 8.
//
// dibs and dibs-spring-boot-starter 0.1.0-SNAPSHOT come from the local Maven repository: install
// them first, with `mvn -DskipTests install` at the repository root and in
// dibs-spring-boot-starter/ (or `gradle publishToMavenLocal` in each).
// Then: gradle bootJar, and java -jar build/libs/dibs-spring-boot-example-0.1.0-SNAPSHOT.jar

import org.jetbrains.kotlin.gradle.tasks.KotlinCompile
import org.springframework.boot.gradle.plugin.SpringBootPlugin

plugins {
    id("org.springframework.boot") version "3.5.7"
    // The Kotlin of dibs's own build (kotlin.version in pom.xml).
    kotlin("jvm") version "2.2.21"
    // Opens @Component, @Configuration, ... classes, which Kotlin makes final.
    kotlin("plugin.spring") version "2.2.21"
}

group = "io.github.dibs.examples"
version = "0.1.0-SNAPSHOT"

java {
    toolchain {
        languageVersion.set(JavaLanguageVersion.of(17))
    }
}

repositories {
    mavenLocal {
        content { includeGroup("io.github.dibs") }
    }
    mavenCentral()
}

dependencies {
    // Spring Boot's versions, as the Maven parent gives them.
    implementation(platform(SpringBootPlugin.BOM_COORDINATES))
    // No Redis client: dibs talks to Redis itself. The web server is there for Actuator's HTTP
    // endpoints (health, metrics, dibs), which scripts/spring-boot-check.sh reads.
    implementation("org.springframework.boot:spring-boot-starter-web")
    implementation("org.springframework.boot:spring-boot-starter-actuator")
    // The DibsClient bean, its meters, health indicator and endpoint; brings dibs itself.
    implementation("io.github.dibs:dibs-spring-boot-starter:0.1.0-SNAPSHOT")
    implementation("org.jetbrains.kotlin:kotlin-stdlib")
    // Spring reads Kotlin constructors (nullability, defaults) through kotlin-reflect.
    implementation("org.jetbrains.kotlin:kotlin-reflect")
}

tasks.withType<KotlinCompile>().configureEach {
    compilerOptions {
        // Spring's nullability annotations become Kotlin types.
        freeCompilerArgs.add("-Xjsr305=strict")
    }
}

tasks.bootJar {
    manifest {
        // JDK 24+ (JEP 472): lets `java -jar` load dibs's JNI library without a warning; older
        // JDKs ignore the attribute.
        attributes(mapOf("Enable-Native-Access" to "ALL-UNNAMED"))
    }
}

tasks.bootRun {
    // bootRun does not launch the jar, so the manifest attribute above does not apply here.
    jvmArgs("--enable-native-access=ALL-UNNAMED")
}
