// Gradle build of the library jar of dibs (java/, with its native libraries). Maven (the root
// pom.xml's reactor, which also builds the other modules) is the build exercised in CI; this one
// mirrors its library module, and scripts/check-build-sync.py keeps the two from drifting apart.
rootProject.name = "dibs"

pluginManagement {
    repositories {
        gradlePluginPortal()
        mavenCentral()
    }
}

dependencyResolutionManagement {
    repositories {
        mavenCentral()
    }
}
