// Gradle build of dibs-kotlin, mirroring pom.xml:
//   compileKotlin      JVM 11 bytecode, explicit API mode (strict), against io.github.dibs:dibs
//                      and kotlinx-coroutines-core
//   test               JUnit 5 against a real redis-server that the tests start (redis-server on
//                      the PATH, or -Predis.server=/path), with -Xcheck:jni; dibs.RedisServer
//                      comes from the dibs test-jar (classifier "tests")
//   jar                Automatic-Module-Name dibs.kotlin; maven-publish for the same coordinates.
// Build the root first (`mvn install` at the repository root), then: gradle -p dibs-kotlin build
//
// NOTE: written to match pom.xml but never run (no Gradle on the machines dibs is developed on).
// Maven is the build that is exercised. Meant for Gradle 8 or newer.

import org.jetbrains.kotlin.gradle.dsl.JvmTarget

plugins {
    kotlin("jvm") version "2.2.21"
    `maven-publish`
}

// Mirrored in pom.xml.
val dibsGroup = "io.github.dibs"
val dibsArtifact = "dibs-kotlin"
val dibsVersion = "0.1.0-SNAPSHOT"
val coroutinesVersion = "1.11.0"
val junitVersion = "5.14.1"
val jvmRelease = 11
val testJvmArgs = listOf("-Xcheck:jni")
val testJvmArgsJdk24plus = listOf("--enable-native-access=ALL-UNNAMED")

val pomUrl = "https://github.com/dibs/dibs"
val pomLicense = listOf("Apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0")
val pomDeveloper = listOf("dibs", "The dibs maintainers", "https://github.com/dibs")
val pomScm = listOf("scm:git:https://github.com/dibs/dibs.git", "scm:git:ssh://git@github.com/dibs/dibs.git", "https://github.com/dibs/dibs")

group = dibsGroup
version = dibsVersion

java {
    sourceCompatibility = JavaVersion.toVersion(jvmRelease)
    targetCompatibility = JavaVersion.toVersion(jvmRelease)
}

kotlin {
    // A public API must say what it returns (the POM's -Xexplicit-api=strict, main sources only).
    explicitApi()
    compilerOptions {
        jvmTarget.set(JvmTarget.fromTarget(jvmRelease.toString()))
    }
}

dependencies {
    api("io.github.dibs:dibs:$dibsVersion")
    api("org.jetbrains.kotlinx:kotlinx-coroutines-core:$coroutinesVersion")

    testImplementation(platform("org.junit:junit-bom:$junitVersion"))
    testImplementation("org.junit.jupiter:junit-jupiter")
    testRuntimeOnly("org.junit.platform:junit-platform-launcher")
    // dibs.RedisServer: the dibs test-jar.
    testImplementation("io.github.dibs:dibs:$dibsVersion:tests")
}

tasks.test {
    useJUnitPlatform()
    // JDK 24+ warns on every System.load unless native access is enabled (JEP 472).
    jvmArgumentProviders.add(CommandLineArgumentProvider {
        val feature = javaLauncher.orNull?.metadata?.languageVersion?.asInt()
            ?: JavaVersion.current().majorVersion.toInt()
        if (feature >= 24) testJvmArgs + testJvmArgsJdk24plus else testJvmArgs
    })
    providers.gradleProperty("redis.server").orNull?.let { systemProperty("redis.server", it) }
    testLogging {
        events("failed")
        exceptionFormat = org.gradle.api.tasks.testing.logging.TestExceptionFormat.FULL
    }
}

tasks.jar {
    manifest {
        attributes("Automatic-Module-Name" to "dibs.kotlin")
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
                name.set("dibs-kotlin")
                description.set(
                    "Kotlin coroutine support for dibs: DibsClient.executeSuspending runs a suspending block " +
                        "under a dibs lock, released when the block ends, throws or is cancelled.",
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
        maven {
            name = "staging"
            url = uri(layout.buildDirectory.dir("staging-repo"))
        }
    }
}
