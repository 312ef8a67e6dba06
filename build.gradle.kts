// Gradle build of the library jar of dibs with its native libraries, mirroring java/pom.xml (the
// library module of the root Maven reactor; the other modules are built by Maven only):
//   cargoBuild      scripts/build-natives.sh <natives>: the libraries into target/natives/
//                   (-Pdibs.natives=linux|all|host|<platforms>, as in the pom; skip: -Pcargo.skip=true)
//   stageNative     every target/natives/<platform>/<lib> -> build/generated/native-resources/
//                   dibs/native/<platform>/, which processResources copies into the main output
//   compileJava     --release 11, no runtime dependencies
//   cargoBuildTestTools  cargo build --release -p dibs-cli -p dibs-test-tools --bins (the CLI and the stress worker
//                   that CliInteropTest and ExclusionStressTest run)
//   cargoBuildTestHooks  the library with --features test-hooks, in target/release
//   compileTestKotlin / compileTestJava, with the shared fixtures of dibs-test-support/src/main/java
//                   (RedisServer, TlsServer, FaultProxy, LockContract) as test sources;
//                   test (JUnit 5, -Xcheck:jni), jniPanicTest (JniPanicTest against the test-hooks
//                   library), testJdk25 (-Pjdk25.java=...: the @Tag("jvm") suites)
//   jar             the native library inside; maven-publish for the same coordinates.
// Gradle keeps its output in build/, away from Cargo's target/.
//
// NOTE: written to match java/pom.xml but never run on the machines dibs is developed on (no
// Gradle there). Maven is the build that CI exercises. Meant for Gradle 8 or newer.

import org.jetbrains.kotlin.gradle.dsl.JvmTarget

plugins {
    `java-library`
    `maven-publish`
    signing
    kotlin("jvm") version "2.2.21" // test sources only; see gradle.properties for the stdlib
}

// The version is written once, as <revision> in the root pom.xml (Cargo.toml holds the Rust
// side's, and scripts/check-build-sync.py holds the two together): read from there.
val dibsVersion: String = Regex("<revision>([^<]+)</revision>")
    .find(file("pom.xml").readText())?.groupValues?.get(1)
    ?: throw GradleException("pom.xml has no <revision>: the version of dibs is set there")

// ===== build-sync: mirrored in pom.xml and java/pom.xml; scripts/check-build-sync.py compares them =====
val dibsGroup = "io.github.dibs"
val dibsArtifact = "dibs"
val javaRelease = 11
val nativeResourceDir = "dibs/native"
val testJvmArgs = listOf("-Xcheck:jni")
val testJvmArgsJdk24plus = listOf("--enable-native-access=ALL-UNNAMED")
val testJvmArgsVirtualThreads = listOf("-Djdk.virtualThreadScheduler.parallelism=2", "-Djdk.virtualThreadScheduler.maxPoolSize=2")
// ===== end build-sync =====

// ===== build-sync: release metadata. The POM's url, license, developer and scm (connection,
// developerConnection, url), as in the root pom.xml; scripts/check-build-sync.py compares them. =====
val pomUrl = "https://github.com/dibs/dibs"
val pomLicense = listOf("Apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0")
val pomDeveloper = listOf("dibs", "The dibs maintainers", "https://github.com/dibs")
val pomScm = listOf("scm:git:https://github.com/dibs/dibs.git", "scm:git:ssh://git@github.com/dibs/dibs.git", "https://github.com/dibs/dibs")
// ===== end build-sync: release metadata =====

group = dibsGroup
version = dibsVersion

val junitVersion = "5.14.1"
val kotlinVersion = "2.2.21"

// This machine's OS, for its library's file name (the test-hooks build) and the default of
// dibs.natives: the four Linux libraries on Linux (cross-built with zig), elsewhere the host's.
val nativeOs = System.getProperty("os.name").lowercase().let {
    when {
        it.startsWith("linux") -> "linux"
        it.startsWith("mac") || it.startsWith("darwin") -> "macos"
        it.startsWith("windows") -> "windows"
        else -> it
    }
}
val nativeLibFile = when (nativeOs) {
    "macos" -> "libdibs.dylib"
    "windows" -> "dibs.dll"
    else -> "libdibs.so"
}
val dibsNatives = providers.gradleProperty("dibs.natives")
    .getOrElse(if (nativeOs == "linux") "linux" else "host")
val cargoSkip = providers.gradleProperty("cargo.skip").map { it.toBoolean() }.getOrElse(false)

java {
    // release (below) decides the bytecode; these keep the Kotlin plugin's JVM-target check in
    // agreement with compileTestJava.
    sourceCompatibility = JavaVersion.toVersion(javaRelease)
    targetCompatibility = JavaVersion.toVersion(javaRelease)
    withSourcesJar()
    withJavadocJar()
}

sourceSets {
    main {
        java.setSrcDirs(listOf("java/src/main/java"))
        resources.setSrcDirs(listOf("java/src/main/resources"))
    }
    test {
        // The fixtures are a module of their own under Maven (dibs-test-support); here, more
        // test sources.
        java.setSrcDirs(listOf("java/src/test/java", "dibs-test-support/src/main/java"))
        resources.setSrcDirs(listOf("java/src/test/resources"))
    }
}

kotlin {
    sourceSets["main"].kotlin.setSrcDirs(emptyList<String>())
    sourceSets["test"].kotlin.setSrcDirs(listOf("java/src/test/kotlin"))
    compilerOptions {
        jvmTarget.set(JvmTarget.fromTarget(javaRelease.toString()))
    }
}

dependencies {
    // Test scope only: the library has no runtime dependencies (kotlin.stdlib.default.dependency=false).
    testImplementation(platform("org.junit:junit-bom:$junitVersion"))
    testImplementation("org.junit.jupiter:junit-jupiter")
    testRuntimeOnly("org.junit.platform:junit-platform-launcher")
    testImplementation("org.jetbrains.kotlin:kotlin-stdlib:$kotlinVersion")
    testImplementation("org.postgresql:postgresql:42.7.14") // FencingPostgresTest (the root pom's version)
}

tasks.withType<JavaCompile>().configureEach {
    options.release.set(javaRelease)
    options.encoding = "UTF-8"
    options.compilerArgs.add("-Xlint:all")
}

// 1. Build the Rust cdylibs.
val cargoBuild by tasks.registering(Exec::class) {
    description = "Builds the dibs native libraries (-Pdibs.natives=...; skip with -Pcargo.skip=true)."
    group = "build"
    onlyIf { !cargoSkip }
    workingDir = rootDir
    // No declared inputs/outputs: it always runs, and cargo decides what is up to date.
    commandLine(listOf("bash", "scripts/build-natives.sh") + dibsNatives.split(" ").filter { it.isNotEmpty() })
}

// 2. Stage them where NativeLoader looks: dibs/native/<platform>/<lib> on the class path.
val stageNative by tasks.registering(Sync::class) {
    description = "Stages every library in target/natives as a resource under $nativeResourceDir/."
    group = "build"
    dependsOn(cargoBuild)
    from(layout.projectDirectory.dir("target/natives")) {
        include("*/libdibs.so", "*/libdibs.dylib", "*/dibs.dll")
        include("*.diff") // each library but the glibc ones, as its diff (scripts/native-diff.py)
        include("natives.properties") // NativeLoader's index: the native version, each library's sha256, size and CRC-32
        into(nativeResourceDir)
    }
    into(layout.buildDirectory.dir("generated/native-resources"))
}
tasks.processResources {
    from(stageNative) // into the main resources output, not into the sources jar
}

// The jar of every platform, as pom.xml's default-jar: the glibc libraries whole, every other one
// as its diff, dibs/native/<platform>.diff. Each platform's jar (6. below) carries its own whole.
// The jar is the module "dibs" (src/main/java/module-info.java): no Automatic-Module-Name.
tasks.jar {
    exclude("$nativeResourceDir/linux-*-musl/libdibs.so", "$nativeResourceDir/macos-*/libdibs.dylib")
    exclude("$nativeResourceDir/windows-*/dibs.dll")
}

tasks.javadoc {
    (options as StandardJavadocDocletOptions).addBooleanOption("Xdoclint:all,-missing", true)
}

// The binaries the tests run beside the JVM, and the library with test-only panic hooks, built
// after them in the release profile whose dependencies they share (the shipped library is the
// dist profile's and never has the hooks).
val testHooksTargetDir = layout.projectDirectory.dir("target") // release/, beside the test tools
val cargoBuildTestTools by tasks.registering(Exec::class) {
    description = "Builds the dibs CLI and the stress worker the Java tests run."
    group = "build"
    onlyIf { !cargoSkip }
    workingDir = rootDir
    commandLine("cargo", "build", "--release", "--package", "dibs-cli", "--package", "dibs-test-tools", "--bins")
}
val cargoBuildTestHooks by tasks.registering(Exec::class) {
    description = "Builds the native library with its test-only panic hooks (JniPanicTest)."
    group = "build"
    onlyIf { !cargoSkip }
    mustRunAfter(cargoBuildTestTools)
    workingDir = rootDir
    commandLine(
        "cargo", "build", "--release", "--package", "dibs-jni", "--lib", "--features", "test-hooks",
        "--target-dir", testHooksTargetDir.asFile.path,
    )
}

// 3. Tests against a real redis-server, with JNI checking.
fun Test.configureDibsTests(jvmArgsFor: () -> List<String>) {
    useJUnitPlatform()
    dependsOn(cargoBuildTestTools)
    // Tests find target/release/dibs and friends relative to the project, as under Maven.
    systemProperty("dibs.root", rootDir.path)
    jvmArgumentProviders.add(CommandLineArgumentProvider { jvmArgsFor() })
    testLogging {
        events("failed")
        exceptionFormat = org.gradle.api.tasks.testing.logging.TestExceptionFormat.FULL
    }
}

// The tests on the class path, as Maven's surefire runs them (<useModulePath>false</useModulePath>):
// ModulePathTest runs the library on the module path, in a JVM of its own.
tasks.compileTestJava { modularity.inferModulePath.set(false) }
tasks.withType<Test>().configureEach { modularity.inferModulePath.set(false) }

tasks.test {
    // JniPanicTest needs the test-hooks library: it runs in jniPanicTest below.
    exclude("**/JniPanicTest.class")
    // As Maven's default-test: two JVMs at once (the suite mostly waits on servers and faults).
    maxParallelForks = 2
    configureDibsTests {
        // JDK 24+ warns on every System.load unless native access is enabled (JEP 472).
        val feature = javaLauncher.orNull?.metadata?.languageVersion?.asInt()
            ?: JavaVersion.current().majorVersion.toInt()
        if (feature >= 24) testJvmArgs + testJvmArgsJdk24plus else testJvmArgs
    }
}

val jniPanicTest by tasks.registering(Test::class) {
    description = "Runs JniPanicTest against the library built with the test-hooks feature."
    group = "verification"
    dependsOn(cargoBuildTestHooks)
    testClassesDirs = sourceSets.test.get().output.classesDirs
    classpath = sourceSets.test.get().runtimeClasspath
    include("**/JniPanicTest.class")
    systemProperty("dibs.native.path", testHooksTargetDir.file("release/$nativeLibFile").asFile.path)
    configureDibsTests { testJvmArgs }
}
tasks.check {
    dependsOn(jniPanicTest)
}

// The JVM's suites (@Tag("jvm"): the loader, the lock contract, virtual threads, interrupts,
// JNI strings) once more on another JVM: ./gradlew testJdk25 -Pjdk25.java=/path/to/bin/java
val jdk25Java = providers.gradleProperty("jdk25.java")
val testJdk25 by tasks.registering(Test::class) {
    description = "Runs the @Tag(\"jvm\") tests on the JVM given by -Pjdk25.java."
    group = "verification"
    onlyIf { jdk25Java.isPresent }
    testClassesDirs = sourceSets.test.get().output.classesDirs
    classpath = sourceSets.test.get().runtimeClasspath
    exclude("**/JniPanicTest.class")
    if (jdk25Java.isPresent) {
        executable = jdk25Java.get() // Gradle 8+ derives the toolchain from this path
    }
    configureDibsTests { testJvmArgs + testJvmArgsJdk24plus + testJvmArgsVirtualThreads }
    useJUnitPlatform { includeTags("jvm") }
}
tasks.check {
    dependsOn(testJdk25)
}

// 4. Publishing, same coordinates as java/pom.xml.
publishing {
    publications {
        create<MavenPublication>("maven") {
            groupId = dibsGroup
            artifactId = dibsArtifact
            version = dibsVersion
            from(components["java"])
            pom {
                name.set("dibs")
                description.set(
                    "A distributed scheduler lock on Redis for JVM services: run a job on exactly " +
                        "one instance per tick. The lock logic is a Rust library bundled in the jar.",
                )
                // What Maven Central requires; the same values as the root pom.xml's release-metadata.
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
        // Local staging repository; real repositories are configured where releases are made.
        // The release to Maven Central is made with Maven (pom.xml, profile "release", and
        // .github/workflows/release.yml): maven-publish cannot upload to the Central Portal.
        maven {
            name = "staging"
            url = uri(layout.buildDirectory.dir("staging-repo"))
        }
    }
}

// 5. Signatures, as pom.xml's release profile makes them: with -Prelease, every artifact of the
// publication (jar, sources, javadoc, POM) gets a .asc from the gpg command line, the default
// key of the environment's keyring (-Psigning.gnupg.keyName=... picks another; passphrase
// through gpg-agent, or -Psigning.gnupg.passphrase=...). Without -Prelease nothing is signed.
// ./gradlew -Prelease -Pcargo.skip=true publishAllPublicationsToStagingRepository
val isRelease = providers.gradleProperty("release").isPresent

// 6. With -Prelease, as pom.xml's release profile: beside the jar of every platform, a jar per
// platform (classifier = the platform, as scripts/build-natives.sh --list names them): the
// classes and that platform's library alone.
val nativePlatforms: List<String> =
    providers.exec { commandLine("bash", "scripts/build-natives.sh", "--list") }
        .standardOutput.asText.get().trim().split(" ")
val platformJars = nativePlatforms.map { platform ->
    tasks.register<Jar>("jar-$platform") {
        description = "The classes and the $platform native library alone."
        group = "build"
        archiveClassifier.set(platform)
        from(sourceSets["main"].output) {
            include("**/*.class", "META-INF/**", "$nativeResourceDir/natives.properties", "$nativeResourceDir/$platform/*")
        }
    }
}
if (isRelease) {
    publishing.publications.named<MavenPublication>("maven") {
        platformJars.forEach { artifact(it) }
    }
}

signing {
    isRequired = isRelease
    if (isRelease) {
        useGpgCmd()
        sign(publishing.publications["maven"])
    }
}
