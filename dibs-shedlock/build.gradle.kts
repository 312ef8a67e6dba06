// Gradle build of dibs-shedlock, mirroring pom.xml:
//   compileJava   --release 11, against io.github.dibs:dibs and shedlock-core
//   test          JUnit 5 against a real redis-server that the tests start (redis-server on the
//                 PATH, or -Predis.server=/path), with -Xcheck:jni; dibs.LockContract and
//                 dibs.RedisServer come from the dibs test-jar (classifier "tests")
//   jar           Automatic-Module-Name dibs.shedlock; maven-publish for the same coordinates.
// Build the root first (`mvn install` at the repository root: it installs the dibs jar and its
// test-jar in ~/.m2), then: gradle -p dibs-shedlock build
//
// NOTE: written to match pom.xml but never run (no Gradle on the machines dibs is developed on).
// Maven is the build that is exercised. Meant for Gradle 8 or newer.

plugins {
    `java-library`
    `maven-publish`
}

// Mirrored in pom.xml.
val dibsGroup = "io.github.dibs"
val dibsArtifact = "dibs-shedlock"
val dibsVersion = "0.1.0-SNAPSHOT"
val shedlockVersion = "7.10.1"
val junitVersion = "5.14.1"
val javaRelease = 11
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
    // Both appear in the provider's public API (DibsClient, LockProvider): compile scope in the POM.
    api("io.github.dibs:dibs:$dibsVersion")
    api("net.javacrumbs.shedlock:shedlock-core:$shedlockVersion")

    testImplementation(platform("org.junit:junit-bom:$junitVersion"))
    testImplementation("org.junit.jupiter:junit-jupiter")
    testRuntimeOnly("org.junit.platform:junit-platform-launcher")
    // dibs.LockContract and dibs.RedisServer: the dibs test-jar.
    testImplementation("io.github.dibs:dibs:$dibsVersion:tests")
}

tasks.withType<JavaCompile>().configureEach {
    options.release.set(javaRelease)
    options.encoding = "UTF-8"
    options.compilerArgs.add("-Xlint:all")
}

tasks.test {
    useJUnitPlatform()
    // JDK 24+ warns on every System.load unless native access is enabled (JEP 472).
    jvmArgumentProviders.add(CommandLineArgumentProvider {
        val feature = javaLauncher.orNull?.metadata?.languageVersion?.asInt()
            ?: JavaVersion.current().majorVersion.toInt()
        if (feature >= 24) testJvmArgs + testJvmArgsJdk24plus else testJvmArgs
    })
    // As -Dredis.server=... does under Maven: which redis-server binary the tests start.
    providers.gradleProperty("redis.server").orNull?.let { systemProperty("redis.server", it) }
    testLogging {
        events("failed")
        exceptionFormat = org.gradle.api.tasks.testing.logging.TestExceptionFormat.FULL
    }
}

tasks.jar {
    manifest {
        attributes("Automatic-Module-Name" to "dibs.shedlock")
    }
}

// Publishing, same coordinates and POM metadata as pom.xml.
publishing {
    publications {
        create<MavenPublication>("maven") {
            groupId = dibsGroup
            artifactId = dibsArtifact
            version = dibsVersion
            from(components["java"])
            pom {
                name.set("dibs-shedlock")
                description.set(
                    "A ShedLock LockProvider on dibs: every @SchedulerLock job of a ShedLock user runs " +
                        "under a dibs lock on Redis, by changing one bean.",
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
