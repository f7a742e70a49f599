/* Preloaded by scripts/sanitize-test into every test process: dlclose leaves libraries loaded.
 * OpenMPI unloads its plugins (mca_*.so) at MPI_Finalize, after which LeakSanitizer can name
 * neither the module nor the function of their leaks' stacks ("<unknown module>"), so that no
 * suppression can tell OpenMPI's leaks from the project's; with the plugins kept, lsan.supp
 * names OpenMPI's modules and every other leak still fails its test. */
int dlclose(void* handle) {
  (void)handle;
  return 0;
}
