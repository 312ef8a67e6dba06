// Gradle build of dibs-spring-boot-starter, mirroring pom.xml and boot4/pom.xml:
//   compileJava   --release 17, -parameters, against io.github.dibs:dibs and Spring Boot 3.5.7
//                 (spring-boot-autoconfigure); Micrometer and Actuator are optional
//                 (compileOnly here, <optional> in the POM), and Boot 4's spring-boot-health
//                 4.0.7 is compile-only, without its dependencies, for DibsHealthIndicatorBoot4
//   test          JUnit 5 on Boot 3.5.7, against real redis-servers the tests start
//                 (redis-server on the PATH, or -Predis.server=/path), with -Xcheck:jni;
//                 dibs.RedisServer comes from the dibs test-jar (classifier "tests")
//   testBoot4     the same compiled test classes again, on a classpath of Boot 4.0.7 instead
//                 (Maven does this in boot4/pom.xml, from the starter's test-jar)
//   jar           Automatic-Module-Name dibs.spring; testJar (classifier "tests") as Maven's;
//                 maven-publish for the same coordinates
// Build the root first (`mvn install` at the repository root: it installs the dibs jar and its
// test-jar in ~/.m2), then: gradle -p dibs-spring-boot-starter build
//
// NOTE: written to match pom.xml but never run (no Gradle on the machines dibs is developed on).
// Maven is the build that is exercised. Meant for Gradle 8 or newer.

plugins {
    `java-library`
    `maven-publish`
}

// Mirrored in pom.xml.
val dibsGroup = "io.github.dibs"
val dibsArtifact = "dibs-spring-boot-starter"
val dibsVersion = "0.1.0-SNAPSHOT"
val springBootVersion = "3.5.7"
val springBoot4Version = "4.0.7"
val javaRelease = 17
val testJvmArgs = listOf("-Xcheck:jni")
val testJvmArgsJdk24plus = listOf("--enable-native-access=ALL-UNNAMED")

val pomUrl = "https://github.com/dibs/dibs"
val pomLicense = listOf("Apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0")
val pomDeveloper = listOf("dibs", "The dibs maintainers", "https://github.com/dibs")
val pomScm = listOf("scm:git:https://github.com/dibs/dibs.git", "scm:git:ssh://git@github.com/dibs/dibs.git", "https://github.com/dibs/dibs")

group = dibsGroup
version = dibsVersion

java {
    sourceCompatibility = JavaVersion.toVersion(javaRelease)
    targetCompatibility = JavaVersion.toVersion(javaRelease)
}

dependencies {
    // Boot 3.5.7's versions (the POM imports the same BOM).
    implementation(platform("org.springframework.boot:spring-boot-dependencies:$springBootVersion"))
    api("io.github.dibs:dibs:$dibsVersion")
    api("org.springframework.boot:spring-boot-autoconfigure")

    // Optional: wired only when the application has them.
    compileOnly("io.micrometer:micrometer-core")
    compileOnly("org.springframework.boot:spring-boot-actuator")
    compileOnly("org.springframework.boot:spring-boot-health:$springBoot4Version") { isTransitive = false }

    testImplementation(platform("org.springframework.boot:spring-boot-dependencies:$springBootVersion"))
    testImplementation("io.micrometer:micrometer-core")
    testImplementation("org.springframework.boot:spring-boot-actuator")
    testImplementation("org.springframework.boot:spring-boot-actuator-autoconfigure")
    testImplementation("org.springframework.boot:spring-boot-test")
    testImplementation("org.junit.jupiter:junit-jupiter")
    testImplementation("org.assertj:assertj-core")
    testRuntimeOnly("org.junit.platform:junit-platform-launcher")
    // dibs.RedisServer: the dibs test-jar.
    testImplementation("io.github.dibs:dibs:$dibsVersion:tests")
}

tasks.withType<JavaCompile>().configureEach {
    options.release.set(javaRelease)
    options.encoding = "UTF-8"
    // Spring binds constructor parameters by name.
    options.compilerArgs.addAll(listOf("-parameters", "-Xlint:all,-processing,-classfile"))
}

fun Test.dibsTestSetup(expectedBoot: String) {
    useJUnitPlatform()
    // JDK 24+ warns on every System.load unless native access is enabled (JEP 472).
    jvmArgumentProviders.add(CommandLineArgumentProvider {
        val feature = javaLauncher.orNull?.metadata?.languageVersion?.asInt()
            ?: JavaVersion.current().majorVersion.toInt()
        if (feature >= 24) testJvmArgs + testJvmArgsJdk24plus else testJvmArgs
    })
    // BootVersionTest: the Boot these tests must run on.
    systemProperty("dibs.expected.boot", expectedBoot)
    providers.gradleProperty("redis.server").orNull?.let { systemProperty("redis.server", it) }
    testLogging {
        events("failed")
        exceptionFormat = org.gradle.api.tasks.testing.logging.TestExceptionFormat.FULL
    }
}

tasks.test {
    dibsTestSetup("3.5")
}

// The Boot 4 run: the same test classes, the starter's classes, and Boot 4.0.7's modules in
// place of 3.5.7's (boot4/pom.xml's dependencies).
val boot4TestRuntime: Configuration by configurations.creating {
    isCanBeConsumed = false
    isCanBeResolved = true
}

dependencies {
    boot4TestRuntime(platform("org.springframework.boot:spring-boot-dependencies:$springBoot4Version"))
    boot4TestRuntime("io.github.dibs:dibs:$dibsVersion")
    boot4TestRuntime("io.github.dibs:dibs:$dibsVersion:tests")
    boot4TestRuntime("org.springframework.boot:spring-boot-autoconfigure")
    boot4TestRuntime("org.springframework.boot:spring-boot-actuator")
    boot4TestRuntime("org.springframework.boot:spring-boot-health")
    boot4TestRuntime("org.springframework.boot:spring-boot-micrometer-metrics")
    boot4TestRuntime("io.micrometer:micrometer-core")
    boot4TestRuntime("org.springframework.boot:spring-boot-test")
    boot4TestRuntime("org.junit.jupiter:junit-jupiter")
    boot4TestRuntime("org.assertj:assertj-core")
    boot4TestRuntime("org.junit.platform:junit-platform-launcher")
}

val testBoot4 by tasks.registering(Test::class) {
    description = "Runs the starter's tests on Spring Boot $springBoot4Version."
    group = "verification"
    testClassesDirs = sourceSets.test.get().output.classesDirs
    classpath = sourceSets.test.get().output + sourceSets.main.get().output + boot4TestRuntime
    dibsTestSetup("4.0")
    shouldRunAfter(tasks.test)
}

tasks.check {
    dependsOn(testBoot4)
}

tasks.jar {
    manifest {
        attributes("Automatic-Module-Name" to "dibs.spring")
    }
}

// The test classes as a jar, classifier "tests", as Maven's test-jar goal makes.
val testJar by tasks.registering(Jar::class) {
    archiveClassifier.set("tests")
    from(sourceSets.test.get().output)
}

// Publishing, same coordinates and POM metadata as pom.xml.
publishing {
    publications {
        create<MavenPublication>("maven") {
            groupId = dibsGroup
            artifactId = dibsArtifact
            version = dibsVersion
            from(components["java"])
            artifact(testJar)
            pom {
                name.set("dibs-spring-boot-starter")
                description.set(
                    "Spring Boot auto-configuration for dibs: one DibsClient bean from spring.data.redis.*, " +
                        "Micrometer meters, an Actuator health indicator and a /actuator/dibs endpoint.",
                )
                url.set(pomUrl)
                licenses {
                    license {
                        name.set(pomLicense[0])
                        url.set(pomLicense[1])
                    }
                }
                developers {
                    developer {
                        id.set(pomDeveloper[0])
                        name.set(pomDeveloper[1])
                        url.set(pomDeveloper[2])
                    }
                }
                scm {
                    connection.set(pomScm[0])
                    developerConnection.set(pomScm[1])
                    url.set(pomScm[2])
                }
            }
        }
    }
    repositories {
        // Local staging repository, as in the root build.
        maven {
            name = "staging"
            url = uri(layout.buildDirectory.dir("staging-repo"))
        }
    }
}
