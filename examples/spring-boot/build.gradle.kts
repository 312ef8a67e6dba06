// Gradle build of the example, with the same dependencies and jar as pom.xml.
//
// NOTE: written to match pom.xml but never run on the machines dibs is developed on (no Gradle
// there); pom.xml is the build that scripts/spring-boot-check.sh runs. Meant for Gradle 8.
//
// dibs 0.1.0-SNAPSHOT comes from the local Maven repository: install it first from the
// repository root, with `mvn -DskipTests install` or `gradle publishToMavenLocal`.
// Then: gradle bootJar, and java -jar build/libs/dibs-spring-boot-example-0.1.0-SNAPSHOT.jar

import org.jetbrains.kotlin.gradle.tasks.KotlinCompile
import org.springframework.boot.gradle.plugin.SpringBootPlugin

plugins {
    id("org.springframework.boot") version "3.5.16"
    // The Kotlin version Spring Boot 3.5 manages (kotlin.version in its Maven parent).
    kotlin("jvm") version "1.9.25"
    // Opens @Component, @Configuration, ... classes, which Kotlin makes final.
    kotlin("plugin.spring") version "1.9.25"
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
    // Core Spring Boot only: no web server, no Redis client (dibs talks to Redis itself).
    implementation("org.springframework.boot:spring-boot-starter")
    implementation("io.github.dibs:dibs:0.1.0-SNAPSHOT")
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
