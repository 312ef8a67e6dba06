// Gradle build of dibs-kotlin, mirroring pom.xml (Maven is the build that is
// exercised; this one has never been run). A build of its own, like the Maven module: the dibs
// jar and its test-jar (classifier "tests") come from the local Maven repository, where
// `mvn install` at the repository root puts them.
rootProject.name = "dibs-kotlin"

dependencyResolutionManagement {
    repositories {
        mavenLocal {
            content { includeGroup("io.github.dibs") } // only dibs itself comes from ~/.m2
        }
        mavenCentral()
    }
}
