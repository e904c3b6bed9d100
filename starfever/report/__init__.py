"""Reports for test labs and game mathematicians: the PAR sheet."""
