// Gradle build of the Java side of dibs. Maven (pom.xml) is the build exercised in CI; this one
// mirrors it, and scripts/check-build-sync.py keeps the two from drifting apart.
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
