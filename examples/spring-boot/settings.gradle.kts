// A build of its own, apart from the library's build at the repository root.
// NOTE: never run here (no Gradle on the machines dibs is developed on); pom.xml is the build
// that scripts/spring-boot-check.sh runs.
rootProject.name = "dibs-spring-boot-example"
