from whichgpu.cli import main

main()
