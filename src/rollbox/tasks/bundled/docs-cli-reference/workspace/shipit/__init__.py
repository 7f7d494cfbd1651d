"""shipit: deploy container images to the fleet."""
