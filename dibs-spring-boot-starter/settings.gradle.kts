// Gradle build of dibs-spring-boot-starter, mirroring pom.xml (Maven is the build that is
// exercised; this one has never been run). A build of its own, like the Maven module: the dibs
// jar and its test-jar (classifier "tests") come from the local Maven repository, where
// `mvn install` at the repository root puts them.
rootProject.name = "dibs-spring-boot-starter"

dependencyResolutionManagement {
    repositories {
        mavenLocal {
            content { includeGroup("io.github.dibs") } // only dibs itself comes from ~/.m2
        }
        mavenCentral()
    }
}
